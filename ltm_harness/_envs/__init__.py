"""AIQ-style environments for chat agents: active (act step by step) and passive (a problem set), the built-in
ones, and environments as tests inside the long conversation."""
