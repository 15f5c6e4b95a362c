"""The batched, prefix-reusing option scorer of the hf backend against the plain computation."""

from __future__ import annotations

from typing import Any

import pytest

from psymetrics_core.api import GenerationSettings, Option, Prompt


@pytest.mark.model
def test_fast_scores_equal_plain_loop(smollm2: Any, fresh_plugins: Any) -> None:
    hook = fresh_plugins.hook
    prompts = []
    for task, ids in (("bfi", range(0, 5)), ("mfq", (0, 1, 16, 17, 18))):
        inst = fresh_plugins.get_instrument(task)
        prompts += [hook.render_prompt(instrument=inst, item=inst.items[i]) for i in ids]
    # multi-token options ("10", "100") exercise the one-row-per-option path
    multi = (Option(10, "ten"), Option(25, "twenty-five"), Option(100, "hundred"))
    prompts.append(
        Prompt(messages=({"role": "user", "content": "Pick one."},), options=multi, text="")
    )
    stored: dict[int, Any] = {}
    fast = smollm2.option_logprobs(
        prompts, GenerationSettings(mode="logprob"), on_result=lambda i, c: stored.setdefault(i, c)
    )
    assert sorted(stored) == list(range(len(prompts)))  # every prompt reported as it finished
    for i, (p, c) in enumerate(zip(prompts, fast, strict=True)):
        plain = smollm2.loglikelihoods(smollm2.context_text(p), [str(o.value) for o in p.options])
        assert c.option_logprobs == pytest.approx(plain, abs=1e-4)
        assert max(range(len(plain)), key=plain.__getitem__) == max(
            range(len(plain)), key=c.option_logprobs.__getitem__
        )
        assert stored[i] == c


def _row(prompt: int, tokens: list[int]) -> Any:
    from psymetrics_plugin_hf.hf_fast import _Row

    return _Row(prompt, tokens, [(len(tokens) - 1, 7, 0)])


def test_prefix_groups_give_each_instruction_block_its_own_prefix() -> None:
    from psymetrics_plugin_hf import hf_fast

    system = list(range(100, 110))  # 10 tokens every row shares
    block_a = list(range(200, 220))  # 20 more tokens: earns its own prefix pass (>= 16)
    block_b = list(range(300, 310))  # 10 more tokens: too few, stays at the root
    rows = [
        _row(0, system + block_a + [1, 2]),
        _row(1, system + block_b + [3]),
        _row(2, system + block_a + [4, 5, 6]),
        _row(3, system + block_b + [8, 9]),
        _row(4, system + [9]),
    ]
    groups = hf_fast._prefix_groups(rows, 10)
    # by hand: rows 0 and 2 share 10 + 20 tokens; rows 1, 3, 4 share only the system prompt
    assert [(g.prefix, sorted(r.prompt for r in g.rows)) for g in groups] == [
        (30, [0, 2]),
        (10, [1, 3, 4]),
    ]
    # a shared prefix never swallows a read position: row 0 reads at its last token
    short = [_row(0, system + block_a), _row(1, system + block_a + [1])]
    (group,) = hf_fast._prefix_groups(short, 10)
    assert group.prefix == len(system + block_a) - 1


def test_budget_batches_minimise_padding_plus_a_cost_per_pass() -> None:
    from psymetrics_plugin_hf import hf_fast

    # widths 2, 2, 2, 40 after the prefix: one batch would pad to 4 x 40 = 160 tokens + 64;
    # by hand the best cut is [2, 2, 2] (6 + 64) and [40] (40 + 64) = 174 < 224
    rows = [_row(i, [0] * (5 + w)) for i, w in enumerate((2, 40, 2, 2))]
    batches = hf_fast._budget_batches(rows, 5, 4096)
    assert [sorted(r.prompt for r in b) for b in batches] == [[0, 2, 3], [1]]
    # equal widths: one pass is cheapest; the budget still caps a batch's padded tokens
    same = [_row(i, [0] * 15) for i in range(10)]
    assert [len(b) for b in hf_fast._budget_batches(same, 5, 4096)] == [10]
    assert [len(b) for b in hf_fast._budget_batches(same, 5, 30)] == [3, 3, 3, 1]


SEQUENCE = "January\nFebruary\nMarch"


def test_hf_rows_tokenise_the_continuation() -> None:
    """An option's continuation (probe tasks' sequences, issue 12) is scored token by token."""
    from psymetrics_plugin_hf import hf_fast
    from psymetrics_plugin_hf.hf import HFBackend

    assert HFBackend.supports_continuations

    class CharTokens:  # one token per character: the rows must hold the continuation's
        def context_text(self, prompt: Prompt) -> str:
            return prompt.messages[0]["content"]

        def _encode(self, text: str) -> list[int]:
            return [ord(c) for c in text]

    msg = "List the months in order, one per line."
    pr = Prompt(({"role": "user", "content": msg},), (Option(0, "sequence", SEQUENCE),), msg)
    (row,) = hf_fast._rows(CharTokens(), [pr])
    ctx = pr.messages[0]["content"]
    assert row.tokens == [ord(c) for c in ctx + SEQUENCE]
    assert [tok for _, tok, _ in row.reads] == [ord(c) for c in SEQUENCE]
    assert row.reads[0][0] == len(ctx) - 1  # the first continuation token is read after ctx
    (digit,) = hf_fast._rows(CharTokens(), [Prompt(pr.messages, (Option(3, "Agree"),), ctx)])
    assert [tok for _, tok, _ in digit.reads] == [ord("3")]  # ordinary options: the value


def test_prefix_groups_split_again_below_a_shared_persona_beginning() -> None:
    """Two respondents whose personas share 20 tokens and then part: one group each, at the
    end of its own persona (not one group at the 20 shared tokens, which would leave each
    persona's rest to be computed once per item)."""
    from psymetrics_plugin_hf import hf_fast

    alike = list(range(100, 120))  # 20 tokens both personas begin with
    a, b = alike + list(range(200, 230)), alike + list(range(300, 330))  # then 30 of their own
    rows = [_row(0, a + [1]), _row(1, b + [2]), _row(2, a + [3, 4]), _row(3, b + [5])]
    groups = hf_fast._prefix_groups(rows, 0)
    # by hand: rows 0 and 2 share all 50 tokens of a; rows 1 and 3 all 50 of b
    assert [(g.prefix, sorted(r.prompt for r in g.rows)) for g in groups] == [
        (50, [0, 2]),
        (50, [1, 3]),
    ]


def test_group_slices_bound_the_padded_prefix_pass() -> None:
    from psymetrics_plugin_hf import hf_fast

    groups = [hf_fast._Group(n, []) for n in (10, 30, 20, 5)]
    # by hand, budget 60: [10, 30] pads to 2 x 30 = 60; adding 20 would be 3 x 30 = 90, so a
    # new slice [20, 5] = 2 x 20 = 40; a group wider than the budget still gets a slice
    cut = hf_fast._group_slices(groups, 60)
    assert [[g.prefix for g in part] for part in cut] == [[10, 30], [20, 5]]
    assert [[g.prefix for g in part] for part in hf_fast._group_slices(groups, 1)] == [
        [10],
        [30],
        [20],
        [5],
    ]


def test_group_slices_do_not_pad_short_prefixes_to_long_ones() -> None:
    from psymetrics_plugin_hf import hf_fast

    groups = [hf_fast._Group(n, []) for n in (100, 1000, 990)]
    # by hand: adding 1000 to [100] pads 2 x 1000 - 100 = 1900 more tokens, above a pass of its
    # own (64 + 1000); adding 990 to [1000] pads 2 x 1000 - 1000 = 1000 <= 64 + 990: it joins
    cut = hf_fast._group_slices(groups, 10**6)
    assert [[g.prefix for g in part] for part in cut] == [[100], [1000, 990]]
