"""The forms a LangChain/LangGraph agent takes in a user's file, each made a graph the adapter runs one thread of.

| the object | how it is run |
|---|---|
| a compiled graph (`builder.compile()`, `create_react_agent(...)`, LangChain's `create_agent(...)`) | as it is |
| a `StateGraph` builder | compiled (without a checkpointer) |
| a Functional API workflow (`@entrypoint`, with or without a checkpointer; returning a value or `entrypoint.final`) | as it is: handed the new message (`[message]`, or `{"messages": [message]}` when its input is a dict), its return value is the reply |
| a `RunnableWithMessageHistory` | the one node of a `MessagesState` graph: handed the thread's messages as its history (its `get_session_history` is not called: the thread is the history) |
| any other chat Runnable (a chat model, `prompt \\| model`, a `RunnableLambda`) | the one node of a `MessagesState` graph, handed the thread's messages |

Objects that are Runnables but not chat agents are refused in one line saying what was found: a tool (`@tool`), a
retriever, a prompt template alone, an output parser, an embedding model, and a sequence that ends in one of them.
"""

from __future__ import annotations

import inspect
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSequence
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel

from ltm_harness._errors import AgentError
from ltm_harness._guard.limits import kind_of

PREVIOUS = "__previous__"  # the channel a Functional API workflow keeps its `save` value in


def is_functional(graph: Pregel[Any, Any, Any, Any]) -> bool:
    """A workflow made with LangGraph's Functional API (`@entrypoint`): it keeps its memory in `previous`."""
    return PREVIOUS in (graph.channels or {}) and not hasattr(graph, "builder")


def not_an_agent(obj: Any) -> str | None:
    """What `obj` is when it is a Runnable that cannot hold a conversation (None: it may)."""
    from langchain_core.output_parsers import BaseOutputParser
    from langchain_core.prompts import BasePromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool

    if isinstance(obj, RunnableSequence):
        last = not_an_agent(obj.last)
        if last is not None and not isinstance(obj.last, BaseOutputParser):
            return f"a sequence that ends in {last}"
        return None
    if isinstance(obj, BaseTool):
        return f"a LangChain tool ({obj.name!r})"
    if isinstance(obj, BaseRetriever):
        return f"a retriever ({type(obj).__name__})"
    if isinstance(obj, BasePromptTemplate):
        return f"a prompt template alone ({type(obj).__name__}, no model after it)"
    if isinstance(obj, BaseOutputParser):
        return f"an output parser ({type(obj).__name__})"
    return None


def as_graph(obj: Any, form: str, spec: str) -> tuple[Pregel[Any, Any, Any, Any], str]:
    """The graph to run for the user's object, and how its input is given ("dict" or "messages")."""
    from langchain_core.runnables.history import RunnableWithMessageHistory

    if isinstance(obj, StateGraph):
        obj = obj.compile()  # the builder was given: compiled without a checkpointer
    if isinstance(obj, Pregel):
        return obj, (_input_form(obj, spec, functional=is_functional(obj)) if form == "auto" else form)
    found = not_an_agent(obj)
    if found is not None:
        raise AgentError(f"agent {spec!r}: the object is {found}, not a chat agent; name the graph or chain that "
                         "answers the user (a compiled graph, a chat model, prompt | model)")
    if isinstance(obj, RunnableWithMessageHistory):
        return _history_graph(obj), "dict"
    if isinstance(obj, Runnable):
        return _runnable_graph(obj, _input_form(obj, spec) if form == "auto" else form), "dict"
    if inspect.isfunction(obj):
        raise AgentError(f"agent {spec!r}: the object is a plain function, not a LangGraph graph or a LangChain "
                         "Runnable; decorate it with @entrypoint() or wrap it in RunnableLambda(...)")
    raise AgentError(f"agent {spec!r}: the object is {kind_of(obj)}, not a compiled LangGraph graph or a LangChain "
                     "Runnable; name the graph (builder.compile()) or a Runnable")


def _input_form(runnable: Runnable[Any, Any], spec: str, functional: bool = False) -> str:
    """"dict" when the input schema has a `messages` key, "messages" when it is not an object (a list of messages, a
    chat model's input, an untyped function); an object without `messages` cannot be handed a conversation. A schema
    that cannot be read: "messages" for a Functional API workflow (its tutorials take a list), else "dict"."""
    try:
        schema = runnable.get_input_jsonschema()
    except Exception:  # an input type pydantic cannot describe
        return "messages" if functional else "dict"
    keys = schema.get("properties") or {}
    if not keys:
        return "messages"
    if "messages" not in keys:
        raise AgentError(f"agent {spec!r}: its input has no `messages` key (it takes {', '.join(sorted(keys))}); keep "
                         "the conversation in `messages` (MessagesState), or say how to hand it over with "
                         "?input=dict or ?input=messages")
    return "dict"


def _one_node(call: Any) -> Pregel[Any, Any, Any, Any]:
    builder = StateGraph(MessagesState)
    builder.add_node("runnable", call)
    builder.add_edge(START, "runnable")
    builder.add_edge("runnable", END)
    return builder.compile()


def _runnable_graph(runnable: Runnable[Any, Any], form: str) -> Pregel[Any, Any, Any, Any]:
    """A one-node `MessagesState` graph around a Runnable: handed the thread's messages, its output appended."""

    async def call(state: MessagesState) -> dict[str, list[BaseMessage]]:
        history = state["messages"]
        out = await runnable.ainvoke(history if form == "messages" else {"messages": history})
        return {"messages": [as_message(out)]}

    return _one_node(call)


def _history_graph(chain: Any) -> Pregel[Any, Any, Any, Any]:
    """A one-node `MessagesState` graph around a `RunnableWithMessageHistory`: its history is the thread's messages
    before the new one (given through the config, as its own `get_session_history` would give it, for every key of
    its `history_factory_config`), its input the new message's text, its output the reply."""
    from langchain_core.chat_history import InMemoryChatMessageHistory

    keys = [spec.id for spec in chain.history_factory_config]

    async def call(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        *before, new = state["messages"]
        text = new.content
        history = InMemoryChatMessageHistory(messages=list(before))
        thread = ((config or {}).get("configurable") or {}).get("thread_id", "")
        given = {chain.input_messages_key: text} if chain.input_messages_key else text
        out = await chain.bound.ainvoke(given, {"configurable": {"message_history": history,
                                                                 **dict.fromkeys(keys, thread)}})
        if isinstance(out, dict):
            key = chain.output_messages_key or (next(iter(out)) if len(out) == 1 else "output")
            out = out.get(key)
        if isinstance(out, list) and out:
            out = out[-1]
        return {"messages": [as_message(out)]}

    return _one_node(call)


def as_message(out: Any) -> BaseMessage:
    """A Runnable's or a workflow's output as the reply message: a message, a string, `{"messages": [...]}` or a
    list of messages (its last)."""
    if isinstance(out, BaseMessage):
        return out
    if isinstance(out, str):
        return AIMessage(content=out)
    if isinstance(out, dict) and isinstance(out.get("messages"), list):
        out = out["messages"]
    if isinstance(out, list) and out and isinstance(out[-1], BaseMessage):
        return out[-1]
    raise TypeError(f"the agent returned {kind_of(out)}; return a message, a string or {{'messages': [...]}}")
