"""keydoor: a key-and-door grid world described in text (sub-tests 5x5, 6x6 and 7x7).

A square room with a few walls, a key and a locked door, drawn as a text map every step. The agent
walks onto the key to pick it up, then into the door to open it, which ends the episode. Walls, the
edge and the locked door stop a move (the step is still used). A new room is drawn every episode.

Reward: on opening the door, the shortest possible number of steps divided by the steps taken
(invalid replies count as steps), so the sum of rewards is 1.0 for a shortest walk, less for a
longer one, and 0 when the door is not opened within the step cap (default: size x size).
"""

from __future__ import annotations

from collections import deque
from typing import Literal

from pydantic import Field

from ltm_harness._envs.base import ActiveEnv

from ltm_harness._envs.header import Action, EnvHeader, EnvParams, Observation, Space

Cell = tuple[int, int]
State = tuple[Cell, bool]  # position, has the key
MOVES: dict[str, Cell] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
SIZES: dict[str, int] = {"5x5": 5, "6x6": 6, "7x7": 7}


class KeyDoorParams(EnvParams):
    env_name: Literal["5x5", "6x6", "7x7"] = "5x5"
    walls: int | None = Field(default=None, ge=0, le=12)  # default: size - 2
    max_steps: int | None = Field(default=None, ge=1, le=1000)  # default: size x size


class KeyDoor(ActiveEnv):
    test_name = "keydoor"
    Params = KeyDoorParams
    params: KeyDoorParams
    sub_tests = tuple(SIZES)

    position: Cell = (0, 0)
    has_key = False
    opened = False
    shortest = 0
    walls: frozenset[Cell] = frozenset()
    key: Cell = (0, 0)
    door: Cell = (0, 0)

    @property
    def size(self) -> int:
        return SIZES[self.params.env_name]

    @property
    def header(self) -> EnvHeader:
        n = self.size
        return EnvHeader(
            name=f"keydoor-{self.params.env_name}", kind="active",
            action_space=Space(description="a move", choices=tuple(MOVES)),
            observation_space=Space(description="step, steps_left, event, map (rows of A K D # .), "
                                                "position [row, column], has_key"),
            info=f"{n}x{n} room: pick up the key, then open the door; reward = shortest steps / steps taken",
            min_score=0.0, max_score=1.0,
        )

    def default_max_steps(self) -> int:
        return self.size * self.size

    # -- the room -------------------------------------------------------------------------
    def _reset(self) -> None:
        n = self.size
        n_walls = self.params.walls if self.params.walls is not None else n - 2
        cells = [(r, c) for r in range(n) for c in range(n)]
        while True:
            picked = self.rng.sample(cells, n_walls + 3)
            self.walls = frozenset(picked[3:])
            self.position, self.key, self.door = picked[0], picked[1], picked[2]
            self.has_key = False
            shortest = self._distance((self.position, False))
            if shortest is not None:
                break
        self.shortest = shortest
        self.opened = False

    def _move(self, state: State, move: str) -> tuple[State, bool]:
        """The state after `move` from `state`, and whether the door opened."""
        (r, c), key = state
        dr, dc = MOVES[move]
        target = (r + dr, c + dc)
        n = self.size
        if not (0 <= target[0] < n and 0 <= target[1] < n) or target in self.walls:
            return state, False
        if target == self.door:
            return (state, True) if key else (state, False)
        return (target, key or target == self.key), False

    def _plan(self, start: State) -> tuple[int, str] | None:
        """(steps, first move) of a shortest walk from `start` that opens the door, or None."""
        first: dict[State, str] = {}
        seen = {start}
        queue: deque[tuple[State, int]] = deque([(start, 0)])
        while queue:
            state, dist = queue.popleft()
            for move in MOVES:
                nxt, opened = self._move(state, move)
                lead = first.get(state, move)
                if opened:
                    return dist + 1, lead
                if nxt not in seen:
                    seen.add(nxt)
                    first[nxt] = lead
                    queue.append((nxt, dist + 1))
        return None

    def _distance(self, state: State) -> int | None:
        plan = self._plan(state)
        return plan[0] if plan else None

    # -- steps ----------------------------------------------------------------------------
    def _act(self, action: Action) -> tuple[float, bool, str]:
        move = str(action)
        before = (self.position, self.has_key)
        (self.position, self.has_key), opened = self._move(before, move)
        if opened:
            self.opened = True
            return self.shortest / self.steps, True, f"You moved {move} and opened the door!"
        if self.position == before[0]:
            dr, dc = MOVES[move]
            target = (before[0][0] + dr, before[0][1] + dc)
            if target == self.door:
                return 0.0, False, f"You tried to move {move}, but the door is locked: you need the key first."
            return 0.0, False, f"You tried to move {move}, but a wall is in the way."
        if self.has_key and not before[1]:
            return 0.0, False, f"You moved {move} and picked up the key."
        return 0.0, False, f"You moved {move}."

    def _observe(self) -> Observation:
        rows = []
        for r in range(self.size):
            row = []
            for c in range(self.size):
                cell = (r, c)
                if cell == self.position:
                    row.append("A")
                elif cell == self.key and not self.has_key:
                    row.append("K")
                elif cell == self.door:
                    row.append("D")
                elif cell in self.walls:
                    row.append("#")
                else:
                    row.append(".")
            rows.append(" ".join(row))
        return {"map": rows, "position": list(self.position), "has_key": self.has_key}

    def rules(self) -> str:
        n = self.size
        return (f"You are in a {n}x{n} room, drawn as a map. Walk onto the key (K) to pick it up, then walk "
                "into the door (D) to open it and leave. The door stays locked until you have the key. Each "
                "move goes one square up, down, left or right; walls (#) and the edge of the map stop you. "
                "The fewer moves you use, the better.")

    def describe(self, observation: Observation) -> str:
        key = "You have the key." if observation["has_key"] else "You do not have the key yet."
        grid = "\n".join(observation["map"])
        return f"Map (A = you, K = key, D = door, # = wall, . = floor; up is the top row):\n{grid}\n{key}"

    def oracle_action(self) -> Action:
        plan = self._plan((self.position, self.has_key))
        if plan is None:  # cannot happen: rooms are drawn solvable and moves never block the way back
            raise RuntimeError("keydoor: no way to the door from here")
        return plan[1]

    def summary(self) -> str:
        if self.opened:
            return f"You opened the door in {self.steps} steps (the shortest way takes {self.shortest})."
        return f"You did not open the door within {self.steps} steps."
