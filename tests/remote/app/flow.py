"""A functional-API graph: an `@entrypoint` calling two `@task`s (outline, then essay).
Its first task is triggered by the input itself, so its one loop checkpoint is step 0."""

from langgraph.func import entrypoint, task


@task
def outline(topic: str) -> str:
    return f"outline of {topic}"


@task
def essay(plan: str) -> str:
    return f"essay from {plan}"


@entrypoint()
def graph(topic: str) -> str:
    return essay(outline(topic).result()).result()
