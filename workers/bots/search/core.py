"""Single-observer information-set MCTS (SO-ISMCTS; Cowling, Powley and Whitehouse 2012).

One tree over the searching seat's information sets. Each iteration samples a world the
seat cannot tell from the real one (the game's `determinize(view, seat, rng)`: the view
only, never the state), walks the tree in that world, choosing at every node among the
moves available in it (ISUCT: the exploration term counts how often a move was
*available*, not how often its parent was visited), adds one node, plays a short rollout
with the fixed heuristic for every seat and scores the leaf with the game's
`evaluate(state)`, one win chance per seat. Each node's edge keeps the reward of the seat
that moved along it, so every seat's choices in the tree are its own best replies.

Two published refinements, both driven by the heuristic:
- *Progressive widening* (Coulom 2007; Chaslot et al. 2008): below the root, a node
  visited n times offers only its first ceil(sqrt(n)) moves, the heuristic's own move first;
  a rival's node therefore plays the heuristic until it has been visited enough to try
  something else, instead of spending the budget on every rival reply.
- *Progressive bias* (Chaslot et al. 2008): the heuristic's move gets a bonus
  `bias / (visits + 1)` that fades as the statistics take over.

The root's moves are shared out in one of two ways (`GameSearch.root`):
- "ucb": ISUCT as everywhere else, then `Search._decide`;
- "halving": sequential halving over common sampled worlds (`Search._halving`): every move
  still in play is searched in the same worlds, the worse half dropped each round, and a
  move replaces the heuristic's only by a paired gain measured world by world.

The heuristic stands for two things, and a game may split them (`GameSearch.own_policy`): the
rivals' model (what the three other seats will do: the heuristic itself, the level they play)
and the searching seat's own prior and rollout policy, which may be a stronger variant of it.
A game may also give the root's move a policy of its own (`GameSearch.root_hint`), run once a
search where it would cost too much at every node: the move the search keeps unless it finds
a better one, while below the root the seat plays its own policy.

Integer ranges in the legal actions (bids, counts) are searched at a few values: both ends,
evenly spaced points between, and the heuristic's own value.

The budget is an iteration count with a time cap. Every random draw (the sampled worlds,
the rollouts, the rules' own dice and shuffles inside the search) comes from the bot's
`rng`, itself keyed by the bot secret and the game's version, so a search that is not cut by
its time cap is reproducible from (bot secret, game, seat, version, iterations).
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from projections.templates import fits, is_range

from .budget import Budget, turn_deadline

EXPLORATION = 0.7           # ISUCT's constant, rewards being win chances in [0, 1]
PRIOR_BIAS = 0.3            # the heuristic move's progressive bias
CONFIDENCE = 1.0            # see Search._decide
HALVING_VISITS = 3          # halving searches at most iterations / this many root moves
MIN_GAIN_FLOOR = 0.005      # a paired gain smaller than this is noise (lost lines differ by 1e-12)
RANGE_POINTS = 5            # values searched in an integer range (ends included)


@dataclass(frozen=True)
class GameSearch:
    """What the search needs of one game: the determinizer, the leaf evaluator, the
    heuristic (rollouts and priors) and how far a rollout goes before the evaluator."""

    game: object
    determinize: Callable          # (view, seat, random.Random) -> State
    evaluate: Callable             # (State) -> [win chance per seat]
    heuristic: Callable            # the fixed heuristic policy (view, legal, seat, rng) -> action
    rollout_moves: int = 4         # heuristic decisions after the tree, before evaluate
    exploration: float = EXPLORATION
    prior_bias: float = PRIOR_BIAS
    confidence: float = CONFIDENCE   # standard errors by which a move must beat the heuristic's
    min_gain: float = 0.0            # and the win chance it must gain at least
    root: str = "ucb"                # "ucb" (ISUCT at the root too) or "halving" (Search._halving)
    own_policy: Optional[Callable] = None   # the searching seat's own prior and rollout policy
                                            # (None: the heuristic); the rivals always play the heuristic
    root_hint: Optional[Callable] = None    # the seat's move at the root alone, from a policy too
                                            # costly to run at every node (None: own_policy)


@dataclass
class SearchStats:
    iterations: int = 0
    seconds: float = 0.0
    root_moves: int = 0
    cut_by_time: bool = False
    visits: dict = field(default_factory=dict)    # root move key -> visits
    means: dict = field(default_factory=dict)     # root move key -> mean win chance found


class FastDraws:
    """The rules' `Draws` interface over a `random.Random`: the search's own dice and
    shuffles (the service's HMAC draws are exact and auditable, and far too slow here)."""

    __slots__ = ("_random",)

    def __init__(self, rng: random.Random):
        self._random = rng

    def below(self, label: str, n: int) -> int:
        if n <= 0:
            raise ValueError("n must be positive")
        return self._random.randrange(n)

    def randint(self, label: str, low: int, high: int) -> int:
        return self._random.randint(low, high)

    def choice(self, label: str, items):
        return items[self._random.randrange(len(items))]

    def shuffle(self, label: str, items) -> list:
        out = list(items)
        self._random.shuffle(out)
        return out


class _Edge:
    """A move out of a node: its statistics for the seat that makes it, and the child."""

    __slots__ = ("visits", "available", "reward", "squares", "child")

    def __init__(self):
        self.visits = 0
        self.available = 0
        self.reward = 0.0
        self.squares = 0.0         # sum of squared rewards: the root's standard errors
        self.child: dict = {}      # (actor, move key) -> _Edge

    def mean(self) -> float:
        return self.reward / self.visits if self.visits else 0.0

    def standard_error(self) -> float:
        if self.visits < 2:
            return math.inf
        mean = self.mean()
        variance = max(0.0, self.squares / self.visits - mean * mean) * self.visits / (self.visits - 1)
        return math.sqrt(variance / self.visits)


def action_key(action: dict) -> tuple:
    return tuple(sorted(action.items()))


def _range_values(low: int, high: int, points: int) -> list[int]:
    if high - low + 1 <= points:
        return list(range(low, high + 1))
    step = (high - low) / (points - 1)
    return sorted({low + round(k * step) for k in range(points)})


def candidate_moves(legal: list[dict], hint: Optional[dict], points: int = RANGE_POINTS) -> list[dict]:
    """Complete moves to search: the heuristic's first, then every complete legal action,
    each integer range at a few spread values (ranges are filled one field at a time, the
    others at their lowest)."""
    out, seen = [], set()

    def add(move: dict) -> None:
        key = action_key(move)
        if key not in seen:
            seen.add(key)
            out.append(move)

    if hint is not None and any(fits(hint, t) for t in legal):
        add(dict(hint))
    for template in legal:
        ranges = [k for k, v in template.items() if is_range(v)]
        if not ranges:
            add(dict(template))
            continue
        lowest = {k: (v["min"] if is_range(v) else v) for k, v in template.items()}
        for name in ranges:
            for value in _range_values(template[name]["min"], template[name]["max"], points):
                add({**lowest, name: value})
    return out


class OutOfTime(Exception):
    """The move's time cap passed in the middle of an iteration."""


class Search:
    """One move's search from one seat's view."""

    def __init__(self, spec: GameSearch, view: dict, seat: int, rng: random.Random, budget: Budget,
                 clock: Callable[[], float] = time.perf_counter):
        self.spec, self.game = spec, spec.game
        self.view, self.seat, self.budget, self.clock = view, seat, budget, clock
        self.base = rng.getrandbits(64)
        self.root: dict = {}
        self.root_visits = 0
        self._moves: dict = {}     # (seat, state) -> the heuristic's move there
        self.deadline = math.inf   # the clock's reading at which the move's time is up (run sets it)

    def run(self, legal: list[dict]) -> tuple[dict, SearchStats]:
        stats = SearchStats()
        started = self.clock()
        hint_rng = random.Random(self.base)
        hint = (self.spec.root_hint or self._policy(self.seat))(self.view, legal, self.seat, hint_rng)
        moves = candidate_moves(legal, hint)
        stats.root_moves = len(moves)
        if len(moves) <= 1:
            return (moves[0] if moves else hint), stats
        # the seat's own moves are the same in every world it samples (they come from what it
        # sees): worked out once here, not in each iteration
        self.root_moves, self.root_hint = moves, hint
        # a worker's turn counts from the job's start (budget.turn_clock), a bare search from here
        deadline = (turn_deadline(self.budget.time_ms, started) if self.clock is time.perf_counter
                    else started + self.budget.time_ms / 1000.0)
        # The cap is checked inside an iteration too (every step of its walk and rollout): an
        # iteration that runs past it is dropped, so a move ends within the cap plus one step.
        self.deadline = deadline
        if self.spec.root == "halving":
            move = self._halving(moves, hint, deadline, stats)
        else:
            for i in range(self.budget.iterations):
                if self.clock() >= deadline:
                    stats.cut_by_time = True
                    break
                try:
                    self._iterate(self._world_rng(i))
                except OutOfTime:
                    stats.cut_by_time = True
                    break
                stats.iterations += 1
            move = self._decide(moves, hint)
        stats.seconds = self.clock() - started
        mine = [(key[1], edge) for key, edge in self.root.items() if key[0] == self.seat]
        stats.visits = {key: edge.visits for key, edge in mine}
        stats.means = {key: edge.mean() for key, edge in mine}
        return move, stats

    def _in_time(self) -> None:
        """Raise OutOfTime once the move's time cap has passed (its iteration is dropped)."""
        if self.clock() >= self.deadline:
            raise OutOfTime

    def _world_rng(self, i: int) -> random.Random:
        return random.Random(self.base * 1_000_003 + i + 1)

    def _halving(self, moves: list[dict], hint: dict, deadline: float, stats: SearchStats) -> dict:
        """Sequential halving over common sampled worlds (Karnin, Koren and Somekh 2013; the
        root of Gumbel MuZero, Danihelka et al. 2022).

        Rounds of equal budget: in each, every move still in play is searched in the same
        sampled worlds (world i comes from the same seed for every move: the same hidden
        cards, and the same dice as far as the lines agree), then the better half stays.
        The heuristic's move always stays: the others are judged against it world by world,
        and a paired difference is steadier than two separate means (the luck of the
        world cancels out). Below the root the tree is the same ISMCTS as ever."""
        budget = self.budget.iterations
        alive = list(moves)
        if len(alive) > max(2, budget // HALVING_VISITS):
            # too many moves for the budget: the heuristic's and a random share of the rest
            # (from the bot's rng: reproducible, and from the view alone)
            picked = random.Random(self.base ^ 0x5EED).sample(alive[1:], max(2, budget // HALVING_VISITS) - 1)
            alive = [alive[0]] + [m for m in alive[1:] if m in picked]
        values = {action_key(m): {} for m in moves}     # move key -> {world: value}
        hint_key = action_key(hint)
        rounds = max(1, math.ceil(math.log2(len(alive))))
        world = 0
        for r in range(rounds):
            per_move = max(1, budget // (rounds * len(alive)))
            if r == rounds - 1:       # the last round takes what is left
                per_move = max(per_move, (budget - stats.iterations) // len(alive))
            for _ in range(per_move):
                for move in alive:
                    if stats.iterations >= budget:
                        return self._paired_choice(alive, hint_key, values)
                    if self.clock() >= deadline:
                        stats.cut_by_time = True
                        return self._paired_choice(alive, hint_key, values)
                    try:
                        value = self._iterate(self._world_rng(world), forced=move)
                    except OutOfTime:
                        stats.cut_by_time = True
                        return self._paired_choice(alive, hint_key, values)
                    if value is not None:
                        values[action_key(move)][world] = value
                    stats.iterations += 1
                world += 1
            if len(alive) <= 2:
                continue
            ranked = sorted(alive, key=lambda m: -_mean(values[action_key(m)].values()))
            keep = ranked[:math.ceil(len(alive) / 2)]
            if all(action_key(m) != hint_key for m in keep):
                keep.append(hint)
            alive = [m for m in alive if m in keep]
        return self._paired_choice(alive, hint_key, values)

    def _paired_choice(self, alive: list[dict], hint_key: tuple, values: dict) -> dict:
        """The best-valued move still in play if it beats the heuristic's by `confidence`
        standard errors of the paired difference and by `min_gain`; else the heuristic's."""
        base = values.get(hint_key, {})
        hint = next((m for m in alive if action_key(m) == hint_key), None)
        best, best_gain, best_spread = None, -math.inf, math.inf
        for move in alive:
            key = action_key(move)
            if key == hint_key:
                continue
            diffs = [v - base[w] for w, v in values[key].items() if w in base]
            if len(diffs) < 2:
                continue
            gain = statistics.fmean(diffs)
            if gain > best_gain:
                best, best_gain, best_spread = move, gain, statistics.stdev(diffs) / math.sqrt(len(diffs))
        if hint is None:
            return best if best is not None else alive[0]
        if (best is not None and best_gain > self.spec.confidence * best_spread
                and best_gain > max(self.spec.min_gain, MIN_GAIN_FLOOR)):
            return best
        return hint

    def _decide(self, moves: list[dict], hint: dict) -> dict:
        """The root's move: the best-valued move searched enough, but the heuristic's own
        move unless the other is better by `confidence` standard errors of the difference
        and by `min_gain` at least (leaves of a lost position differ by 1e-12, and their
        standard errors by less).
        A few hundred noisy leaves cannot tell close moves apart, and the heuristic is a
        good default: the search overrides it only where the evidence says so."""
        edges = [(m, self.root[(self.seat, action_key(m))]) for m in moves
                 if (self.seat, action_key(m)) in self.root and self.root[(self.seat, action_key(m))].visits]
        if not edges:   # nothing searched to the end (an iteration cut by the time cap)
            return hint
        top = max(e.visits for _, e in edges)
        enough = min(top, max(2, top // 4))
        best, best_edge = max(((m, e) for m, e in edges if e.visits >= enough),
                              key=lambda me: (me[1].mean(), me[1].visits))
        hint_edge = self.root.get((self.seat, action_key(hint))) if hint is not None else None
        if hint_edge is None or not hint_edge.visits or action_key(best) == action_key(hint):
            return best
        spread = math.hypot(best_edge.standard_error(), hint_edge.standard_error())
        gain = best_edge.mean() - hint_edge.mean()
        if gain > self.spec.confidence * spread and gain > self.spec.min_gain:
            return best
        return hint

    # --------------------------------------------------------------- one iteration

    def _iterate(self, rng: random.Random, forced: Optional[dict] = None) -> Optional[float]:
        """One iteration; `forced` the root move to follow (halving). The leaf's value for
        the searching seat, None when the sampled world was already over."""
        game, spec = self.game, self.spec
        state = spec.determinize(self.view, self.seat, rng)
        draws = FastDraws(rng)
        children, parent_visits, path = self.root, self.root_visits, []
        at_root = True
        expanded = False
        while not expanded and not game.is_over(state):
            self._in_time()
            # the searching seat moves first from the root (it is to act in every world it
            # samples; when several seats may act at once, any order is one the rules allow)
            if at_root:
                actor, moves, hint = self.seat, self.root_moves, self.root_hint
                if forced is not None:
                    moves = [forced]
            else:
                actor = min(game.to_act(state))
                legal = game.legal_actions(state, actor)
                hint = self._heuristic(state, actor, legal, rng)
                moves = candidate_moves(legal, hint)[:max(1, math.ceil(math.sqrt(parent_visits + 1)))]
            move, edge, expanded = self._select(children, actor, moves, hint)
            path.append((edge, actor))
            state = self._apply(state, actor, move, draws)
            children, parent_visits, at_root = edge.child, edge.visits, False
        if at_root:
            return None
        state = self._rollout(state, rng, draws)
        value = spec.evaluate(state)
        self.root_visits += 1
        for edge, actor in path:
            edge.visits += 1
            edge.reward += value[actor]
            edge.squares += value[actor] * value[actor]
        return value[self.seat]

    def _select(self, children: dict, actor: int, moves: list[dict], hint: dict):
        """The move to follow (ISUCT over the moves available in this world); the edge; and
        whether it was just added (the iteration then leaves the tree)."""
        hint_key = action_key(hint) if hint is not None else None
        untried = None
        for move in moves:
            key = (actor, action_key(move))
            edge = children.get(key)
            if edge is not None:
                edge.available += 1
            elif untried is None:
                untried = move
        if untried is not None:
            edge = children[(actor, action_key(untried))] = _Edge()
            edge.available = 1
            return untried, edge, True
        best, best_edge, best_score = None, None, -math.inf
        for move in moves:
            key = (actor, action_key(move))
            edge = children[key]
            score = (edge.reward / edge.visits
                     + self.spec.exploration * math.sqrt(math.log(edge.available) / edge.visits))
            if key[1] == hint_key:
                score += self.spec.prior_bias / (edge.visits + 1)
            if score > best_score:
                best, best_edge, best_score = move, edge, score
        return best, best_edge, False

    def _heuristic(self, state, actor: int, legal: list[dict], rng: random.Random) -> dict:
        """The heuristic's move for `actor` in a sampled world, from that seat's view of it.
        Remembered per (seat, state) for this search: worlds and lines repeat (every world
        is the same where nothing is hidden), and the heuristic is most of an iteration's
        cost. Its first answer stands for a state (the heuristic's own tie-breaks drawn once)."""
        try:
            key = (actor, state)
            move = self._moves.get(key)
        except TypeError:          # a state with an unhashable field: no memo
            key, move = None, None
        if move is None:
            move = self._policy(actor)(self.game.view(state, actor), legal, actor, rng)
            if key is not None:
                self._moves[key] = move
        return move

    def _policy(self, actor: int) -> Callable:
        """The searching seat's own policy for itself; the heuristic, its rivals' model, for them."""
        if actor == self.seat and self.spec.own_policy is not None:
            return self.spec.own_policy
        return self.spec.heuristic

    def _apply(self, state, actor: int, move: dict, draws: FastDraws):
        for event in self.game.decide(state, actor, move, draws):
            state = self.game.evolve(state, event)
        return state

    def _rollout(self, state, rng: random.Random, draws: FastDraws):
        game = self.game
        for _ in range(self.spec.rollout_moves):
            if game.is_over(state):
                break
            self._in_time()
            actor = min(game.to_act(state))
            move = self._heuristic(state, actor, game.legal_actions(state, actor), rng)
            state = self._apply(state, actor, move, draws)
        return state


def _mean(values) -> float:
    """The mean of a move's values; a move whose every world was already over ranks last."""
    values = list(values)
    return statistics.fmean(values) if values else -math.inf


def search(spec: GameSearch, view: dict, legal: list[dict], seat: int, rng: random.Random,
           budget: Budget = Budget()) -> tuple[dict, SearchStats]:
    """The searched move for `seat` from its `view` and `legal` actions, and the statistics."""
    return Search(spec, view, seat, rng, budget).run(legal)
