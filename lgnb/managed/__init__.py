"""Managed values: state keys computed by the runtime, not written by nodes.

`remaining_steps: RemainingSteps` gives a node the number of super-steps left before
the recursion limit, so an agent can stop gracefully instead of raising
GraphRecursionError; `is_last_step: IsLastStep` is True on the last allowed step.
The modules mirror LangGraph's (`langgraph.managed.is_last_step`, `.base`), so code that
imports from them ports by renaming the package.
"""

from lgnb.managed.base import ManagedValue, is_managed_value
from lgnb.managed.is_last_step import IsLastStep, RemainingSteps

__all__ = ("IsLastStep", "ManagedValue", "RemainingSteps", "is_managed_value")
