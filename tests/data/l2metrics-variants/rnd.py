import hashlib
from ltm_harness import Agent

class Rnd(Agent):
    def __init__(self, spec=None):
        super().__init__(spec)
        self.n = 0

    async def reply(self, message, oracle_hint=None):
        self.n += 1
        h = hashlib.sha256(f"{self.n}".encode()).digest()[0]
        return str(1 + h % 3)
