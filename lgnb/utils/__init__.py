"""LangGraph's `langgraph.utils` compatibility modules, under the same names.

`lgnb.utils.config` and `lgnb.utils.runnable` are what `langgraph.utils.config` and
`langgraph.utils.runnable` still re-export in LangGraph 1.x for code written against 0.x
(`from langgraph.utils.config import get_store`, a `RunnableCallable` node, a copied
`ToolNode`), so such programs port by renaming the package as every other import does.
"""
