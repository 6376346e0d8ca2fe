"""A LangGraph agent whose memory is its thread, for `python -m ltm_harness run -a langgraph:...`.

The graph has one node: it hands the thread's messages (everything said so far in the conversation, kept by the
graph's checkpointer) to a chat model and appends the model's reply. The harness runs one thread per conversation
and, since the graph is compiled without a checkpointer, keeps the thread in the run folder (a SQLite checkpointer),
so an interrupted run resumes with the same thread: `run --resume`.

    pip install "ltm-harness[langchain]"
    python -m ltm_harness run -a lg=langgraph:examples/agents/langgraph_agent.py:graph -a retrieval

The model is `ChatOpenAI` on OPENAI_BASE_URL (any OpenAI-compatible server; OpenAI's when unset) with
OPENAI_API_KEY; LTM_EXAMPLE_MODEL names it (default gpt-4o-mini). Offline, on the harness's mock server:

    python -m ltm_harness mock-llm --port 8765 &
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 LTM_EXAMPLE_MODEL=mock \\
        python -m ltm_harness run -a lg=langgraph:examples/agents/langgraph_agent.py:graph -a null
"""

import os

from langchain_core.messages import SystemMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph

model = ChatOpenAI(
    model=os.environ.get("LTM_EXAMPLE_MODEL", "gpt-4o-mini"),
    base_url=os.environ.get("OPENAI_BASE_URL"),
    api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),  # a local server needs no key
    temperature=0,
)
INSTRUCTIONS = SystemMessage(
    "You are a helpful assistant in a long conversation with one user. Each user message starts with the date and "
    "time it was sent. Remember what the user tells you, follow their instructions and answer briefly."
)


async def respond(state: MessagesState) -> dict:
    """Answer from the whole thread: the graph's state is the agent's memory."""
    reply = await model.ainvoke([INSTRUCTIONS, *state["messages"]])
    return {"messages": [reply]}


builder = StateGraph(MessagesState)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()  # no checkpointer: the harness gives the graph one in the run folder
