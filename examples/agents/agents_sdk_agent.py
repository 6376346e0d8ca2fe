"""An OpenAI Agents SDK agent, for `python -m ltm_harness run -a openai-agents:...`.

The agent itself keeps no memory: the harness runs it with one `SQLiteSession` per conversation, stored in the run
folder, and the SDK sends the session's items (everything said so far) to the model on every turn. An interrupted
run resumes with the same session: `run --resume`.

    pip install "ltm-harness[openai-agents]"
    python -m ltm_harness run -a sdk=openai-agents:examples/agents/agents_sdk_agent.py:agent -a retrieval

The model is given by name (LTM_EXAMPLE_MODEL, default gpt-4o-mini); the harness runs it through chat completions on
its OpenAI-compatible endpoint (the config's `openai.base_url`, else OPENAI_BASE_URL; OPENAI_API_KEY). Offline, on
the harness's mock server:

    python -m ltm_harness mock-llm --port 8765 &
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 LTM_EXAMPLE_MODEL=mock \\
        python -m ltm_harness run -a sdk=openai-agents:examples/agents/agents_sdk_agent.py:agent -a null
"""

import os

from agents import Agent

agent = Agent(
    name="memory",
    instructions=(
        "You are a helpful assistant in a long conversation with one user. Each user message starts with the date "
        "and time it was sent. Remember what the user tells you, follow their instructions and answer briefly."
    ),
    model=os.environ.get("LTM_EXAMPLE_MODEL", "gpt-4o-mini"),
)
