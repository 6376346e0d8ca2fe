"""Adapters for agents built with memory frameworks (LangGraph, the OpenAI Agents SDK, ...).

Each adapter is a `FrameworkAgent` (`base.py`): the framework keeps the conversation in its own store, which lives
in the run folder (`Agent.state_dir`), so `--resume` brings the framework's memory back from what it saved instead of
feeding it the turns again. Each framework is an optional extra of the package, imported only when its kind is used
(see `Builtin`/`Extra` in `ltm_harness._agents.specs`).
"""
