"""The conversation engine: the scheduler (pure planning), the channel (one turn to an agent), the session loop,
test programs, filler, the virtual clock and token counting."""
