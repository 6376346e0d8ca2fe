"""The built-in environments: the optimal policy scores the maximum, a random one clearly less;
episodes are seeded; params and names are checked with one clear error."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ltm_harness.envs import ENVIRONMENTS, ActiveEnv, PassiveEnv, make_env, parse_test_spec
from ltm_harness._envs.keydoor import KeyDoor
from ltm_harness._envs.play import (
    aiq_score,
    evaluate_policy,
    optimal_policy,
    play_policy,
    random_policy,
    random_solver,
    trial_seeds,
)
from ltm_harness._errors import LTMError

TESTS = ["bandit", "bandit,arms=6,horizon=40", "bandit,probabilities=[0.1,0.9,0.3]", "keydoor,env_name=5x5",
         "keydoor,env_name=6x6", "keydoor,env_name=7x7", "guess", "guess,low=-50,high=950", "cipher,env_name=shift",
         "cipher,env_name=substitution"]


@pytest.mark.parametrize("test", TESTS)
def test_optimal_scores_the_maximum_and_random_clearly_less(test):
    best = evaluate_policy(test, trials=20, seed=1)
    rand = evaluate_policy(test, random_policy(1), random_solver(1), trials=20, seed=1)
    assert all(e.normalised == 1.0 for e in best.episodes), best
    assert rand.mean <= 0.6, rand.mean
    assert best.mean - rand.mean >= 0.4


def test_aiq_score_is_the_mean_over_tests():
    scores = [evaluate_policy(t, trials=3) for t in ("bandit", "guess")]
    scores.append(evaluate_policy("keydoor", random_policy(0), trials=3))
    assert aiq_score(scores) == pytest.approx((1.0 + 1.0 + scores[2].mean) / 3)
    assert aiq_score([]) == 0.0


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS.scope()))
def test_same_seed_same_episode_other_seed_other_episode(name):
    def run(seed: int) -> list[str]:
        env = make_env(name, seed=seed)
        if isinstance(env, PassiveEnv):
            return env.get_test() + [e.problem + e.answer for e in env.get_train()]
        assert isinstance(env, ActiveEnv)
        obs = env.reset()
        texts = [env.prompt(obs, first=True)]
        policy = random_policy(seed)
        while not env.done:
            obs, *_ = env.act(policy(env, obs))
            texts.append(env.prompt(obs))
        return texts

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_trials_have_distinct_seeds_drawn_from_the_run_seed():
    seeds = trial_seeds("keydoor", 10, seed=0)
    assert len(set(seeds)) == 10 and seeds == trial_seeds("keydoor", 10, seed=0)
    assert seeds != trial_seeds("keydoor", 10, seed=1) and seeds != trial_seeds("guess", 10, seed=0)


# -- bandit -----------------------------------------------------------------------------------
def test_bandit_scores_expected_payoff_not_luck():
    env = make_env("bandit", probabilities=[0.2, 0.8], horizon=10)
    assert isinstance(env, ActiveEnv)
    h = env.header
    assert (h.min_score, h.max_score) == pytest.approx((2.0, 8.0))
    always_worst = play_policy(env, lambda e, o: 1, seed=3)
    always_best = play_policy(env, lambda e, o: 2, seed=3)
    assert always_worst.normalised == 0.0 and always_best.normalised == 1.0
    half = play_policy(env, lambda e, o: 1 + e.steps % 2, seed=3)
    assert half.normalised == pytest.approx(0.5)


def test_a_bandit_whose_arms_pay_alike_scores_every_policy_the_same_and_says_it_teaches_nothing():
    env = make_env("bandit", probabilities=[0.5, 0.5], horizon=4)
    assert isinstance(env, ActiveEnv)
    h = env.header
    assert (h.min_score, h.max_score) == (0.0, 4.0) and "teaches nothing" in h.warnings[0]
    assert {play_policy(env, policy, seed=1).normalised for policy in (lambda e, o: 1, lambda e, o: 2)} == {0.5}
    assert make_env("bandit", probabilities=[0.2, 0.8]).header.warnings == ()


def test_bandit_shows_only_the_last_pull():
    env = make_env("bandit", probabilities=[0.0, 1.0], horizon=3)
    assert isinstance(env, ActiveEnv)
    env.reset()
    obs, reward, *_ = env.act(2)
    assert reward == 1.0 and obs["arm"] == 2 and obs["reward"] == 1
    obs, reward, *_ = env.act(1)
    text = env.prompt(obs)
    assert reward == 0.0 and "arm 1 and won nothing" in text and "arm 2" not in text


def test_bandit_draws_distinct_arms_per_seed():
    for seed in range(30):
        env = make_env("bandit", seed=seed, arms=4)
        probs = sorted(env.probabilities)  # type: ignore[attr-defined]
        assert len(probs) == 4 and probs[-1] - probs[-2] >= 0.1 and all(0.05 <= p <= 0.95 for p in probs)


@pytest.mark.parametrize("params,message", [
    ({"probabilities": [0.5, 1.5]}, "between 0 and 1"),
    ({"probabilities": [0.5]}, "2 to 20 probabilities"),
    ({"arms": 3, "probabilities": [0.1, 0.2]}, "arms is 3 but 2 probabilities"),
    ({"horizon": 0}, "horizon"),
    ({"arms": 1}, "arms"),
])
def test_bandit_params(params, message):
    with pytest.raises(LTMError, match=message):
        make_env("bandit", **params)


# -- keydoor ----------------------------------------------------------------------------------
@pytest.mark.parametrize("size", ["5x5", "6x6", "7x7"])
def test_keydoor_rooms_are_solvable_and_drawn_per_episode(size):
    env = make_env("keydoor", env_name=size, seed=2)
    assert isinstance(env, KeyDoor)
    n = int(size[0])
    rooms = set()
    for _ in range(20):
        obs = env.reset()
        assert len(obs["map"]) == n and all(len(row.split()) == n for row in obs["map"])
        assert "".join(obs["map"]).count("A") == 1 and env.shortest >= 1
        assert len(env.walls) == n - 2 and env.max_steps == n * n
        rooms.add(tuple(obs["map"]))
    assert len(rooms) == 20


def test_keydoor_rules_walls_locked_door_key_and_reward():
    env = make_env("keydoor", seed=0, walls=0)
    assert isinstance(env, KeyDoor)
    env.reset()
    env.position, env.key, env.door, env.walls = (0, 0), (0, 2), (0, 1), frozenset({(1, 0)})
    env.shortest = 4  # set by hand with the room; the reward is shortest / steps taken
    _, _, done, _ = env.act("up")
    assert not done and env.position == (0, 0) and "wall" in env.last_observation["event"]  # type: ignore[index]
    _, _, done, _ = env.act("right")
    assert not done and env.position == (0, 0) and "locked" in env.last_observation["event"]  # type: ignore[index]
    env.walls = frozenset()
    for move in ("down", "right", "right", "up"):
        env.act(move)
    assert env.has_key and env.position == (0, 2) and "K" not in "".join(env.last_observation["map"])  # type: ignore[index]
    _, reward, done, _ = env.act("left")
    assert done and env.opened and reward == pytest.approx(4 / 7) and "opened the door" in env.summary()


def test_keydoor_oracle_follows_a_shortest_path_from_anywhere():
    env = make_env("keydoor", env_name="7x7", seed=5)
    assert isinstance(env, KeyDoor)
    policy = random_policy(9)
    for _ in range(10):
        obs = env.reset()
        for _ in range(4):  # wander first, then follow the oracle
            obs, _, done, _ = env.act(policy(env, obs))
            if done:
                break
        if env.done:
            continue
        remaining = env._distance((env.position, env.has_key))
        taken = env.steps
        while not env.done:
            env.act(env.oracle_action())
        assert env.opened and env.steps == taken + remaining


# -- guess ------------------------------------------------------------------------------------
@pytest.mark.parametrize("low,high", [(1, 100), (1, 2), (-10, 10), (0, 1000)])
def test_guess_halving_finds_every_secret_within_the_bound(low, high):
    env = make_env("guess", low=low, high=high)
    assert isinstance(env, ActiveEnv)
    bound = math.ceil(math.log2(high - low + 2))
    for seed in range(40):
        result = play_policy(env, optimal_policy, seed=seed)
        assert result.normalised == 1.0 and result.steps <= bound


def test_guess_feedback_and_invalid_guesses():
    env = make_env("guess", seed=1)
    assert isinstance(env, ActiveEnv)
    env.reset()
    secret = env.secret  # type: ignore[attr-defined]
    obs, *_ = env.act(101)
    assert obs["event"].startswith("Your reply was not a valid action")
    obs, *_ = env.act(secret - 1 if secret > 1 else secret + 1)
    assert "too low" in obs["event"] or "too high" in obs["event"]
    _, reward, done, _ = env.act(secret)
    assert done and reward == pytest.approx(min(1.0, 7 / 3))


def test_guess_params():
    with pytest.raises(LTMError, match="high .* must be above low"):
        make_env("guess", low=5, high=5)


# -- cipher -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["shift", "substitution"])
def test_cipher_splits_and_answers(kind):
    for seed in range(20):
        env = make_env("cipher", env_name=kind, seed=seed)
        assert isinstance(env, PassiveEnv)
        answers = env.oracle_answers()
        train = {e.answer for e in env.get_train()}
        dev = {e.answer for e in env.get_dev()}
        assert len(answers) == 10 and len(set(answers)) == 10
        assert not (set(answers) & train) and not (set(answers) & dev) and not (train & dev)
        assert env.evaluate(answers) == 10.0 and env.header.normalise(env.evaluate(answers)) == 1.0
        assert env.evaluate([a.upper() + " " for a in answers]) == 10.0
        assert env.evaluate(answers[:5]) == 5.0 and env.evaluate([]) == 0.0
        assert all(p not in answers for p in env.get_test())
        for ex in env.get_train():
            assert env.encipher(ex.answer) == ex.problem  # type: ignore[attr-defined]


def test_cipher_given_shift_and_key():
    env = make_env("cipher", shift=3)
    assert env.encipher("abcxyz") == "defabc"  # type: ignore[attr-defined]
    key = "qwertyuiopasdfghjklzxcvbnm"
    env = make_env("cipher", env_name="substitution", key=key.upper())
    assert env.encipher("abc") == "qwe"  # type: ignore[attr-defined]


@pytest.mark.parametrize("params,message", [
    ({"env_name": "vigenere"}, "env_name"),
    ({"key": "abc", "env_name": "substitution"}, "each letter a-z exactly once"),
    ({"key": "qwertyuiopasdfghjklzxcvbnm"}, "key is for env_name substitution"),
    ({"env_name": "substitution", "shift": 2}, "shift is for env_name shift"),
    ({"n_test": 0}, "n_test"),
])
def test_cipher_params(params, message):
    with pytest.raises(LTMError, match=message):
        make_env("cipher", **params)


def test_cipher_penalty_for_unreadable_answers():
    env = make_env("cipher", invalid_penalty=0.5, n_test=4)
    assert isinstance(env, PassiveEnv)
    answers = env.oracle_answers()
    graded = env.grade([answers[0], None, "wrong", None])
    assert graded.correct == [True, False, False, False] and graded.missing == 2 and graded.score == 0.0


def test_cipher_config_folder_replaces_the_word_list(tmp_path: Path):
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
             "lima", "mike", "november"]
    (tmp_path / "words.txt").write_text("\n".join(w.upper() for w in words) + "\n\n", encoding="utf-8")
    env = make_env("cipher", config=str(tmp_path), n_train=4, n_dev=2, n_test=6)
    assert isinstance(env, PassiveEnv)
    assert set(env.oracle_answers()) <= set(words)
    with pytest.raises(LTMError, match="usable words but n_train \\+ n_dev \\+ n_test = 20"):
        make_env("cipher", config=str(tmp_path), n_train=4, n_dev=6, n_test=10)
    with pytest.raises(LTMError, match="cannot read .*words.txt"):
        make_env("cipher", config=str(tmp_path / "missing"))
    (tmp_path / "words.txt").write_text("alpha\nice cream\n", encoding="utf-8")
    with pytest.raises(LTMError, match="line 2: 'ice cream' is not one word"):
        make_env("cipher", config=str(tmp_path))


def test_cipher_answers_are_not_in_what_the_agent_sees():
    for seed in range(30):
        for kind in ("shift", "substitution"):
            env = make_env("cipher", env_name=kind, seed=seed)
            assert isinstance(env, PassiveEnv)
            problems = env.get_test()
            shown = " ".join([env.render_problems(problems, train=env.get_train(), label="cipher #1"), repr(env),
                              env.header.model_dump_json()]).lower()
            words = set(shown.replace("[", " ").replace("]", " ").replace(".", " ").split())
            assert not words & set(env.oracle_answers()), (seed, kind)


# -- the registry -----------------------------------------------------------------------------
def test_unknown_names_and_params_are_one_clear_error():
    with pytest.raises(LTMError, match="unknown environment 'maze'; known environments: bandit, cipher, guess, keydoor"):
        make_env("maze")
    with pytest.raises(LTMError, match="environment 'keydoor': unknown param 'size'; known params: seed, "):
        make_env("keydoor", size=5)
    with pytest.raises(LTMError, match="environment 'keydoor': env_name: Input should be '5x5', '6x6' or '7x7'"):
        make_env("keydoor", env_name="8x8")


def test_test_specs():
    spec = parse_test_spec("bandit,probabilities=[0.2,0.8],horizon=20")
    assert spec.name == "bandit" and spec.params == {"probabilities": [0.2, 0.8], "horizon": 20}
    assert spec.label == "bandit(horizon=20,probabilities=[0.2,0.8])"
    assert parse_test_spec("keydoor,env_name=6x6").label == "keydoor(env_name=6x6)"
    assert parse_test_spec("guess").label == "guess"
    with pytest.raises(LTMError, match="is not KEY=VALUE"):
        parse_test_spec("keydoor,6x6")
    with pytest.raises(LTMError, match="give --seed instead"):
        parse_test_spec("keydoor,seed=3")
    with pytest.raises(LTMError, match="unknown environment"):
        parse_test_spec("maze,size=3")
