"""Groundwork's ideation reward: the recipe's schema gate, validity bonus and
set-level score, for verl and TRL.

A rollout is a completion "<think> trace </think><answer> [K idea cards]
</answer>". Its reward is

    0                              if it fails the schema gate (no judge is called)
    EPSILON + sum_i q(u_i) * d_i   otherwise, EPSILON = 0.05

so it is 0 or between EPSILON and EPSILON + K (each card adds at most 1):
0 <= reward <= EPSILON + K. The normalised variants (compute_score_normalized,
compute_score_batch_normalized, grpo_reward_normalized, or normalize=True)
divide it by EPSILON + K, giving 0 .. 1 whatever the row's K.

where u_1..u_K are the cards in the order written, q(u) in {0, 0.5, 1} is
the fraction of the two orderings (u first, gold first) in which a pairwise
judge finds u of higher long-term impact than the gold idea, d_1 = 1 and
d_i = min over earlier cards j of d(u_i, u_j), and d(a, b) is the mean over
problem_gap, core_claim and method of (5 - similarity) / 4 for a judge's
similarity in 1..5.

verl (data_source "groundwork/ideation"; K from extra_info.num_ideas, the
gold card from reward_model.ground_truth):

    custom_reward_function.path=reward.py custom_reward_function.name=compute_score
    +custom_reward_function.reward_kwargs.quality_url=http://host:8000/v1
    +custom_reward_function.reward_kwargs.quality_model=IMPACT_JUDGE
    # or the GROUNDWORK_* environment variables below. verl's default reward loop
    # calls compute_score for a batch's rollouts concurrently; on its legacy path,
    reward_model.use_reward_loop=False reward_manager.name=batch custom_reward_function.name=compute_score_batch

TRL (GRPOTrainer; the export's columns gold and num_ideas reach the reward
function as keyword arguments):

    import reward
    trainer = GRPOTrainer(..., reward_funcs=[reward.grpo_reward])

Judges are OpenAI-compatible chat-completions endpoints (vLLM, SGLang,
llama.cpp, OpenAI, LiteLLM, ...) configured by keyword arguments or the
environment:

    GROUNDWORK_QUALITY_URL, GROUNDWORK_QUALITY_MODEL, GROUNDWORK_QUALITY_API_KEY
    GROUNDWORK_DISTANCE_URL, GROUNDWORK_DISTANCE_MODEL, GROUNDWORK_DISTANCE_API_KEY
    (the API keys fall back to OPENAI_API_KEY; the distance endpoint to the quality one)
    GROUNDWORK_REWARD_MODE=gate   score the gate and the bonus only (no judge)
    GROUNDWORK_NORMALIZE=1        divide every reward by EPSILON + K

or any objects with the methods of PairwiseJudge and SimilarityJudge, given
to make_compute_score / make_grpo_reward. The judges are checked once, at
the first call, before any rollout is scored: without judge settings (and
not in gate mode), with a judge URL that does not answer, an API key it
refuses or a model it does not serve, that first call raises JudgeError
naming the settings to fix, so a training run stops at its first batch
instead of after the first rollout that passes the gate. Nothing beyond the
Python standard library is imported. `python3 reward.py gate-jsonl` checks completions
(JSON lines {"completion", "k"}) with the gate alone.

The gate's rules (tags, fields, labels, axes) are generated from curate's Go
gate (package gate): do not edit the block between the GATE SPEC markers; curate's
tests fail when it differs from the Go gate's.
"""

import concurrent.futures
import json
import os
import re
import sys
import threading
import time
import unicodedata
import urllib.error
import urllib.request

# --- BEGIN GATE SPEC (generated from curate's gate package; do not edit) ---
GATE_SPEC = json.loads(r"""
{
  "version": "gate-v1",
  "think_open": "<think>",
  "think_close": "</think>",
  "answer_open": "<answer>",
  "answer_close": "</answer>",
  "fields": [
    "problem_gap",
    "core_claim",
    "method",
    "inspiration"
  ],
  "label_fields": [
    {
      "field": "problem_gap",
      "axis": "opportunity"
    },
    {
      "field": "method",
      "axis": "paradigm"
    }
  ],
  "axes": {
    "opportunity": [
      "Puzzle / Contradiction",
      "Explanation Gap",
      "Scope Mismatch",
      "Evidence Gap",
      "Bridge Opportunity",
      "Failure / Risk Gap",
      "Resource Bottleneck"
    ],
    "paradigm": [
      "Synthesis / Unification",
      "Relax / Extend Scope",
      "Robustification",
      "Formal Derivation",
      "Empirical Mapping",
      "Artifact / System",
      "Optimization / Search"
    ]
  },
  "other": "Other",
  "second_label_max_runes": 60,
  "reasons": [
    "missing_think",
    "missing_answer",
    "not_json",
    "wrong_count",
    "empty_field",
    "bad_label",
    "wrong_axis"
  ]
}
""")
# --- END GATE SPEC ---

DATA_SOURCE = "groundwork/ideation"
EPSILON = 0.05
DISTANCE_FIELDS = ("problem_gap", "core_claim", "method")


# ---------------------------------------------------------------------------
# The schema gate.


class GateError(Exception):
    """Why a completion fails the gate: reason is one of GATE_SPEC["reasons"],
    card the 1-based card it is about (0: not one card)."""

    def __init__(self, reason, detail, card=0, field=""):
        super().__init__("gate: %s: %s%s" % (reason, "card %d: " % card if card else "", detail))
        self.reason, self.detail, self.card, self.field = reason, detail, card, field


# Go's unicode.IsSpace, which the Go gate trims and splits with; Python's
# str.isspace also counts \x1c-\x1f.
def _is_space(c):
    return c in "\t\n\v\f\r \x85\xa0" or unicodedata.category(c) in ("Zs", "Zl", "Zp")


def _trim(s):
    i, j = 0, len(s)
    while i < j and _is_space(s[i]):
        i += 1
    while j > i and _is_space(s[j - 1]):
        j -= 1
    return s[i:j]


def _fields(s):
    out, word = [], []
    for c in s:
        if _is_space(c):
            if word:
                out.append("".join(word))
                word = []
        else:
            word.append(c)
    if word:
        out.append("".join(word))
    return out


def split_completion(completion):
    """Returns (think, answer): the first think block and the first answer
    block after it, trimmed; raises GateError when either is missing."""
    s = GATE_SPEC
    i = completion.find(s["think_open"])
    if i < 0:
        raise GateError("missing_think", "the completion has no <think> block")
    rest = completion[i + len(s["think_open"]):]
    j = rest.find(s["think_close"])
    if j < 0:
        raise GateError("missing_think", "the <think> block is never closed with </think>")
    think, rest = rest[:j], rest[j + len(s["think_close"]):]
    k = rest.find(s["answer_open"])
    if k < 0:
        raise GateError("missing_answer", "no <answer> block follows the think block")
    rest = rest[k + len(s["answer_open"]):]
    l = rest.find(s["answer_close"])
    if l < 0:
        raise GateError("missing_answer", "the <answer> block is never closed with </answer>")
    return _trim(think), _trim(rest[:l])


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


_JSON_SPACE = " \t\n\r"


def _go_lower(s):
    # Go's strings.ToLower maps each character alone (U+0130 to "i", where
    # Python's str.lower gives two characters).
    return "".join((c.lower() or c)[0] for c in s)


def _label_key(s):
    k = " ".join(_fields(_go_lower(s)))
    return k.replace(" /", "/").replace("/ ", "/")


def _lookup_label(s):
    """Returns (label, axis) for a label of the taxonomy (axis "" for Other),
    or None."""
    k = _label_key(s)
    if k == _label_key(GATE_SPEC["other"]):
        return GATE_SPEC["other"], ""
    for field in GATE_SPEC["label_fields"]:
        axis = field["axis"]
        for label in GATE_SPEC["axes"][axis]:
            if _label_key(label) == k:
                return label, axis
    return None


_BRACKETED = re.compile(r"\[([^\[\]]{1,%d})\]" % GATE_SPEC["second_label_max_runes"])


def parse_label(text, axis):
    """Returns the label that opens text on axis, or raises ValueError."""
    s = _trim(text)
    if not s.startswith("["):
        raise ValueError("must open with exactly one bracketed label")
    end = s.find("]")
    if end < 0:
        raise ValueError("opens with a bracket that is never closed")
    inner, rest = s[1:end], _trim(s[end + 1:])
    found = _lookup_label(inner)
    if found is None:
        raise ValueError("[%s] is not a label" % inner)
    label, ax = found
    if ax and ax != axis:
        raise ValueError("[%s] is a label of the other axis" % label)
    if rest == "":
        raise ValueError("has a label but no text after it")
    for m in _BRACKETED.finditer(rest):
        if _lookup_label(m.group(1)) is not None:
            raise ValueError("has a second label [%s] after [%s]" % (m.group(1), label))
    return label


def _label(text, field, axis):
    """The label that opens field on axis, or GateError: wrong_axis when the
    text instead opens validly with a label of the other axis (the two
    mistakes teach different things), bad_label otherwise."""
    try:
        return parse_label(text, axis)
    except ValueError as err:
        problem = "%s %s" % (field, err)
    for other in GATE_SPEC["axes"]:
        if other == axis:
            continue
        try:
            wrong = parse_label(text, other) != GATE_SPEC["other"]
        except ValueError:
            wrong = False
        if wrong:
            raise GateError("wrong_axis", problem, field=field)
    raise GateError("bad_label", problem, field=field)


def _check_card(item):
    if not isinstance(item, dict):
        raise GateError("not_json", "the card is not a JSON object")
    card = {}
    for f in GATE_SPEC["fields"]:
        if f not in item:
            raise GateError("empty_field", f + " is missing", field=f)
        v = item[f]
        if v is None:  # Go reads a JSON null into a string as ""
            v = ""
        if not isinstance(v, str):
            raise GateError("empty_field", f + " is not a string", field=f)
        if _trim(v) == "":
            raise GateError("empty_field", f + " is empty", field=f)
        card[f] = v
    for lf in GATE_SPEC["label_fields"]:
        card["label_" + lf["axis"]] = _label(card[lf["field"]], lf["field"], lf["axis"])
    return card


def check_answer(answer, k):
    """Checks the body of an <answer> block; returns the k cards (dicts with
    the fields and label_<axis> keys) or raises GateError."""
    if k < 1:
        raise ValueError("gate: want at least 1 card, got k = %d" % k)
    a = _trim(answer)
    if not a.startswith("["):
        raise GateError("not_json", "the answer is not a JSON array of cards")
    dec = json.JSONDecoder(parse_constant=_reject_constant)
    start = len(answer) - len(answer.lstrip(_JSON_SPACE))
    try:
        items, end = dec.raw_decode(answer, start)
    except ValueError as err:
        raise GateError("not_json", "the answer is not a JSON array: %s" % err)
    if answer[end:].strip(_JSON_SPACE) != "":
        raise GateError("not_json", "the answer has text after its JSON array")
    if not isinstance(items, list):
        raise GateError("not_json", "the answer is not a JSON array")
    if len(items) != k:
        raise GateError("wrong_count", "the answer has %d cards, want exactly %d" % (len(items), k))
    cards = []
    for i, item in enumerate(items):
        try:
            cards.append(_check_card(item))
        except GateError as err:
            err.card = i + 1
            err.args = ("gate: %s: card %d: %s" % (err.reason, err.card, err.detail),)
            raise
    return cards


def gate(completion, k):
    """Applies the schema gate to a completion that must hold k cards and
    returns them, or raises GateError."""
    _, answer = split_completion(completion)
    return check_answer(answer, k)


# ---------------------------------------------------------------------------
# Judges.


class JudgeError(Exception):
    """A judge gave no usable answer."""


class PairwiseJudge:
    """The interface of a quality judge: prefer(first, second) returns 0 when
    the idea shown first is likely of higher long-term impact, 1 when the
    second is. Ideas are dicts with problem_gap, core_claim, method and
    inspiration."""

    def prefer(self, first, second):
        raise NotImplementedError


class SimilarityJudge:
    """The interface of a distance judge: similarity(a, b) returns a dict
    mapping each of DISTANCE_FIELDS to an integer from 1 (unrelated) to 5
    (the same)."""

    def similarity(self, a, b):
        raise NotImplementedError


def render_idea(idea, fields=("problem_gap", "core_claim", "method", "inspiration")):
    return "\n".join("%s: %s" % (f, _trim(str(idea.get(f, "")))) for f in fields if idea.get(f))


IMPACT_SYSTEM = (
    "You are an experienced scientist and reviewer. You compare two research ideas and judge which one "
    "is likely to have the higher long-term scientific impact: more follow-up work, wider use, a larger "
    "change in what the field does next. Judge the ideas themselves, not their length or wording."
)
IMPACT_USER = (
    "Idea A:\n{a}\n\nIdea B:\n{b}\n\n"
    'Which idea is likely to have higher long-term scientific impact? Answer with JSON only: {{"winner": "A"}} or {{"winner": "B"}}.'
)
SIMILARITY_SYSTEM = (
    "You compare two research ideas field by field. For each field, rate how similar the two ideas are: "
    "1 = unrelated, 2 = same broad area only, 3 = related but clearly different, 4 = largely the same with "
    "minor differences, 5 = the same."
)
SIMILARITY_USER = (
    "Idea 1:\n{a}\n\nIdea 2:\n{b}\n\n"
    'Answer with JSON only: {{"problem_gap": <1-5>, "core_claim": <1-5>, "method": <1-5>}}.'
)


class OpenAIChat:
    """A minimal OpenAI-compatible chat-completions client (urllib): retries
    429 and 5xx with Retry-After or exponential backoff, a bounded number of
    times."""

    def __init__(self, base_url, model, api_key=None, timeout=120.0, max_tokens=1024, attempts=5, temperature=0.0):
        if not base_url or not model:
            raise ValueError("an OpenAI-compatible judge needs a base URL and a model")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key, self.timeout = model, api_key, float(timeout)
        self.max_tokens, self.attempts, self.temperature = int(max_tokens), int(attempts), float(temperature)

    def complete(self, system, user):
        body = json.dumps({
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        delay = 1.0
        for attempt in range(self.attempts):
            req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    data = json.loads(resp.read().decode("utf-8"))
                content = data["choices"][0]["message"].get("content") or ""
                # A reasoning model's think block is not the answer.
                return re.sub(r"(?s)^\s*<think>.*?</think>", "", content).strip()
            except urllib.error.HTTPError as err:
                if err.code != 429 and err.code < 500 or attempt == self.attempts - 1:
                    raise JudgeError("%s: status %d: %s" % (self.url, err.code, err.read()[:200].decode("utf-8", "replace")))
                wait = _retry_after(err.headers.get("Retry-After"), delay)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                if attempt == self.attempts - 1:
                    raise JudgeError("%s: %s" % (self.url, err))
                wait = delay
            except (KeyError, IndexError, ValueError) as err:
                raise JudgeError("%s: not a chat completion: %s" % (self.url, err))
            time.sleep(wait)
            delay = min(delay * 2, 30.0)
        raise JudgeError("%s: no answer" % self.url)


    def check(self, what):
        """Asks the endpoint, once, whether it answers and serves the model
        (GET /models, which vLLM, SGLang, llama.cpp, OpenAI and LiteLLM
        serve); raises JudgeError naming `what` (the settings) otherwise. A
        server without /models (404, 405) is taken to be there."""
        url = self.url[: -len("/chat/completions")] + "/models"
        headers = {"Authorization": "Bearer " + self.api_key} if self.api_key else {}
        req = urllib.request.Request(url, headers=headers, method="GET")
        try:
            with urllib.request.urlopen(req, timeout=min(self.timeout, 30.0)) as resp:
                data = json.loads(resp.read().decode("utf-8") or "{}")
        except urllib.error.HTTPError as err:
            if err.code in (401, 403):
                raise JudgeError("%s refused the API key (status %d): check %s" % (url, err.code, what["key"]))
            if err.code in (404, 405):
                return
            raise JudgeError("%s answered status %d: check %s" % (url, err.code, what["url"]))
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as err:
            raise JudgeError("cannot reach the judge at %s (%s): check %s" % (self.url, getattr(err, "reason", err), what["url"]))
        except ValueError:
            return  # not a model list: the chat endpoint is what counts
        ids = [m.get("id") for m in data.get("data", []) if isinstance(m, dict)] if isinstance(data, dict) else []
        if ids and self.model not in ids:
            raise JudgeError("%s serves no model %r (it serves %s): check %s" % (url, self.model, ", ".join(map(str, ids[:10])), what["model"]))


def _retry_after(value, default):
    try:
        return max(0.0, min(float(value), 60.0))
    except (TypeError, ValueError):
        return default


def _json_object(text):
    """The first JSON object in text, or None."""
    dec = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


class OpenAIPairwiseJudge(PairwiseJudge):
    """Impact judge on an OpenAI-compatible endpoint."""

    def __init__(self, chat, retries=2):
        self.chat, self.retries = chat, retries

    def prefer(self, first, second):
        user = IMPACT_USER.format(a=render_idea(first), b=render_idea(second))
        last = ""
        for _ in range(self.retries + 1):
            last = self.chat.complete(IMPACT_SYSTEM, user)
            obj = _json_object(last)
            w = str(obj.get("winner", "")).strip().upper() if obj else ""
            if not w:
                m = re.fullmatch(r"\W*(?:idea\s+)?([AB])\W*", last, re.I)
                w = m.group(1).upper() if m else ""
            if w in ("A", "B"):
                return 0 if w == "A" else 1
        raise JudgeError("the impact judge did not name A or B: %r" % last[:200])


class OpenAISimilarityJudge(SimilarityJudge):
    """Similarity judge on an OpenAI-compatible endpoint."""

    def __init__(self, chat, retries=2):
        self.chat, self.retries = chat, retries

    def similarity(self, a, b):
        user = SIMILARITY_USER.format(a=render_idea(a, DISTANCE_FIELDS), b=render_idea(b, DISTANCE_FIELDS))
        last = ""
        for _ in range(self.retries + 1):
            last = self.chat.complete(SIMILARITY_SYSTEM, user)
            obj = _json_object(last) or {}
            try:
                sims = {f: int(obj[f]) for f in DISTANCE_FIELDS}
            except (KeyError, TypeError, ValueError):
                continue
            if all(1 <= v <= 5 for v in sims.values()):
                return sims
        raise JudgeError("the similarity judge did not rate %s from 1 to 5: %r" % (", ".join(DISTANCE_FIELDS), last[:200]))


# ---------------------------------------------------------------------------
# The score.


def quality(judge, idea, gold):
    """q(u): 1 when the idea beats the gold idea in both orderings, 0 when it
    loses both, 0.5 for a split verdict."""
    wins = (judge.prefer(idea, gold) == 0) + (judge.prefer(gold, idea) == 1)
    return wins / 2.0


def distance(judge, a, b):
    """d(a, b): the mean over DISTANCE_FIELDS of (5 - similarity) / 4."""
    sims = judge.similarity(a, b)
    return sum((5 - min(5, max(1, int(sims[f])))) / 4.0 for f in DISTANCE_FIELDS) / len(DISTANCE_FIELDS)


def set_score(cards, gold, quality_judge, distance_judge, window=None):
    """sum_i q(u_i) * min_{j<i} d(u_i, u_j); the first card counts its quality
    alone. window, when set, takes the minimum over the last window earlier
    cards only. A card of quality 0 adds nothing, so its distances are not
    asked for."""
    total = 0.0
    for i, card in enumerate(cards):
        q = quality(quality_judge, card, gold)
        if i == 0 or q == 0:
            total += q
            continue
        lo = 0 if not window else max(0, i - int(window))
        total += q * min(distance(distance_judge, card, cards[j]) for j in range(lo, i))
    return total


def score(completion, gold, k, quality_judge=None, distance_judge=None, window=None, gate_only=False):
    """The reward of one rollout: 0 if it fails the gate, else EPSILON plus the
    set score (EPSILON alone with gate_only)."""
    try:
        cards = gate(completion, k)
    except GateError:
        return 0.0
    if gate_only:
        return EPSILON
    if quality_judge is None or distance_judge is None:
        raise JudgeError("no judges configured: set GROUNDWORK_QUALITY_URL and GROUNDWORK_QUALITY_MODEL "
                         "(and GROUNDWORK_DISTANCE_*), pass judges to make_compute_score, or set "
                         "GROUNDWORK_REWARD_MODE=gate for the gate and the bonus alone")
    if isinstance(gold, str):
        gold = json.loads(gold)
    return EPSILON + set_score(cards, gold, quality_judge, distance_judge, window)


def _setting(kwargs, name, default=None):
    v = kwargs.get(name)
    if v is None:
        v = os.environ.get("GROUNDWORK_" + name.upper())
    return default if v in (None, "") else v


def _names(name):
    """How a setting is given: verl's reward_kwargs key and the variable."""
    return "+custom_reward_function.reward_kwargs.%s or GROUNDWORK_%s" % (name, name.upper())


NO_JUDGES = ("no judges are configured: set %s and %s (the impact judge, an OpenAI-compatible endpoint; "
             "%s and %s for a separate distance judge), pass judge objects to make_compute_score / "
             "make_grpo_reward, or set %s=gate to score the gate and the bonus alone"
             % (_names("quality_url"), _names("quality_model"), _names("distance_url"), _names("distance_model"),
                _names("reward_mode").split(" or ")[1]))


def _number(kwargs, name, default, kind=float):
    v = _setting(kwargs, name, default)
    try:
        return kind(v)
    except (TypeError, ValueError):
        raise ValueError("%s is %r: want a number (%s)" % (name, v, _names(name)))


def judges_from_settings(**kwargs):
    """(quality_judge, distance_judge) from keyword arguments (verl's
    custom_reward_function.reward_kwargs) or GROUNDWORK_* variables; (None,
    None) when no quality endpoint is set. Raises JudgeError naming the
    settings when they are incomplete."""
    q_url = _setting(kwargs, "quality_url")
    if not q_url:
        if _setting(kwargs, "quality_model") or _setting(kwargs, "distance_url") or _setting(kwargs, "distance_model"):
            raise JudgeError("a judge model is set but no endpoint: set %s" % _names("quality_url"))
        return None, None
    q_model = _setting(kwargs, "quality_model")
    if not q_model:
        raise JudgeError("the impact judge at %s has no model: set %s" % (q_url, _names("quality_model")))
    common = dict(timeout=_number(kwargs, "timeout", 120), attempts=_number(kwargs, "attempts", 5, int))
    q_key = _setting(kwargs, "quality_api_key", os.environ.get("OPENAI_API_KEY"))
    q_chat = OpenAIChat(q_url, q_model, q_key, max_tokens=_number(kwargs, "quality_max_tokens", 2048, int), **common)
    d_chat = OpenAIChat(_setting(kwargs, "distance_url", q_url), _setting(kwargs, "distance_model", q_model),
                        _setting(kwargs, "distance_api_key", q_key),
                        max_tokens=_number(kwargs, "distance_max_tokens", 1024, int), **common)
    q_chat.check({"url": _names("quality_url"), "model": _names("quality_model"),
                  "key": _names("quality_api_key") + " (or OPENAI_API_KEY)"})
    if (d_chat.url, d_chat.model, d_chat.api_key) != (q_chat.url, q_chat.model, q_chat.api_key):
        d_chat.check({"url": _names("distance_url"), "model": _names("distance_model"),
                      "key": _names("distance_api_key")})
    return OpenAIPairwiseJudge(q_chat), OpenAISimilarityJudge(d_chat)


def _num_ideas(extra_info, kwargs):
    k = extra_info.get("num_ideas") if isinstance(extra_info, dict) else None
    if k is None:
        k = kwargs.get("num_ideas")
    if k is None:
        raise ValueError("the row has no num_ideas (extra_info.num_ideas in curate's verl-rl export)")
    return int(k)


_UNSET = object()


def _gate_only(kwargs, gate_only):
    if gate_only is not None:
        return bool(gate_only)
    mode = _setting(kwargs, "reward_mode", "full")
    if mode not in ("full", "gate"):
        raise ValueError("reward_mode is %r: want full or gate (%s)" % (mode, _names("reward_mode")))
    return mode == "gate"


def _normalize(kwargs, normalize):
    if normalize is not None:
        return bool(normalize)
    v = str(_setting(kwargs, "normalize", "0")).strip().lower()
    if v not in ("0", "1", "false", "true", "no", "yes"):
        raise ValueError("normalize is %r: want 1 or 0 (%s)" % (v, _names("normalize")))
    return v in ("1", "true", "yes")


def max_score(k):
    """The highest reward of a rollout with k cards: EPSILON + k."""
    return EPSILON + k


def make_compute_score(quality_judge=_UNSET, distance_judge=_UNSET, window=None, gate_only=None, normalize=None):
    """A verl compute_score with these judges (by default, those the settings
    name, read and checked at the first call: see JudgeError above); with
    normalize, each reward is divided by EPSILON + K (0 .. 1)."""
    if (quality_judge is _UNSET) != (distance_judge is _UNSET) or (
            quality_judge is not _UNSET and (quality_judge is None) != (distance_judge is None)):
        raise JudgeError("give both judges to make_compute_score, or neither (the settings then name them)")
    cache = {}
    lock = threading.Lock()

    def judges(kwargs):
        if quality_judge is not _UNSET:
            return quality_judge, distance_judge
        key = tuple(sorted((k, str(v)) for k, v in kwargs.items() if k not in ("extra_info",)))
        # One thread reads and checks the settings; the rollouts scored
        # beside it wait for its verdict rather than ask the judges too.
        with lock:
            if key not in cache:
                cache[key] = judges_from_settings(**kwargs)
            return cache[key]

    def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
        if data_source != DATA_SOURCE:
            try:
                from verl.utils.reward_score import default_compute_score
            except ImportError:
                raise ValueError("data_source %r is not %r, and verl is not there to score it" % (data_source, DATA_SOURCE))
            return default_compute_score(data_source, solution_str, ground_truth, extra_info)
        only = _gate_only(kwargs, gate_only)
        q, d = (None, None) if only else judges(kwargs)
        if not only and (q is None or d is None):
            # Before the gate: a run without judges stops at its first
            # rollout, not at the first that passes.
            raise JudgeError(NO_JUDGES)
        w = window if window is not None else _setting(kwargs, "window")
        k = _num_ideas(extra_info, kwargs)
        r = score(solution_str, ground_truth, k, q, d, w and int(w), only)
        return r / max_score(k) if _normalize(kwargs, normalize) else r

    def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
        workers = int(_setting(kwargs, "workers", 16))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(compute_score, ds, s, gt, ei, **kwargs)
                       for ds, s, gt, ei in zip(data_sources, solution_strs, ground_truths, extra_infos)]
            return [f.result() for f in futures]

    return compute_score, compute_score_batch


def _completion_text(c):
    """A TRL completion: a string, or a list of messages whose last assistant
    turn is the completion."""
    if isinstance(c, str):
        return c
    if isinstance(c, (list, tuple)):
        for m in reversed(c):
            if isinstance(m, dict) and m.get("role") == "assistant":
                return m.get("content") or ""
    raise TypeError("a completion is a string or a list of messages, not %r" % type(c).__name__)


def make_grpo_reward(quality_judge=_UNSET, distance_judge=_UNSET, window=None, gate_only=None, normalize=None):
    """A TRL GRPOTrainer reward function with these judges (checked at its
    first call, as make_compute_score's); normalize divides by EPSILON + K."""
    compute_score, _ = make_compute_score(quality_judge, distance_judge, window, gate_only, normalize)

    def grpo_reward(completions, gold, num_ideas, **kwargs):
        workers = int(_setting({}, "workers", 16))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(compute_score, DATA_SOURCE, _completion_text(c), g, {"num_ideas": k})
                       for c, g, k in zip(completions, gold, num_ideas)]
            return [f.result() for f in futures]

    grpo_reward.__name__ = "groundwork_set_reward"
    return grpo_reward


compute_score, compute_score_batch = make_compute_score()
compute_score_normalized, compute_score_batch_normalized = make_compute_score(normalize=True)
grpo_reward = make_grpo_reward()
grpo_reward_normalized = make_grpo_reward(normalize=True)


# ---------------------------------------------------------------------------
# Command line.


def _main(argv):
    if len(argv) < 2 or argv[1] not in ("gate-jsonl", "score-jsonl", "spec"):
        sys.stderr.write("usage: reward.py gate-jsonl | score-jsonl | spec\n"
                         "  gate-jsonl:  JSON lines {\"completion\", \"k\"} on stdin -> {\"valid\", \"reason\", \"card\", \"detail\"}\n"
                         "  score-jsonl: JSON lines {\"completion\", \"gold\", \"k\"} -> {\"score\"} with the configured judges\n"
                         "  spec:        print the gate's rules\n")
        return 2
    if argv[1] == "spec":
        print(json.dumps(GATE_SPEC, indent=2))
        return 0
    for line in sys.stdin:
        if not line.strip():
            continue
        row = json.loads(line)
        if argv[1] == "gate-jsonl":
            try:
                gate(row["completion"], int(row["k"]))
                out = {"valid": True, "reason": "", "card": 0, "detail": ""}
            except GateError as err:
                out = {"valid": False, "reason": err.reason, "card": err.card, "detail": err.detail}
            except ValueError as err:  # k < 1: not a gate verdict
                out = {"valid": False, "reason": "", "card": 0, "detail": str(err)}
        else:
            out = {"score": compute_score(DATA_SOURCE, row["completion"], row["gold"], {"num_ideas": row["k"]})}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
