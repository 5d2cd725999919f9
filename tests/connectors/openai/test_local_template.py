"""The chat template of the built-in Qwen models, rendered with Jinja as the engine does:
after a result whose report has a "hint:" line, or after a failed call, the model is told to
fix it with a call; otherwise, and for older hinted results, it is told to answer, or (for
a model that can judge it, ``agentsdk_next_step``) to take the next step or answer."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import jinja2

TEMPLATE = files("agentsdk_openai.local") / "templates" / "qwen_tools.jinja"
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("fit_view", "render")
]
FIX = "Fix it now with a function call"
ANSWER = "Use the function result above to answer the user's question in plain text."

REPORT = "view camera: 1 of 1 objects visible\nbox: 2%, right, red, cut off 56% (right)"
HINTED = REPORT + '\nhint: box is cut off on the right: call fit_view(names=["box"])'


def _render(
    *results: str, next_step: bool | None = None, answer_only: bool = False, unmade: str = ""
) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Build the scene."},
        {"role": "user", "content": "Add a box and frame it."},
    ]
    for n, text in enumerate(results):
        call = {"name": "fit_view", "arguments": {"names": ["box"]}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [{"function": call}]})
        messages.append({"role": "tool", "content": text, "tool_call_id": f"c{n}"})
    # As llama.cpp renders chat templates (like Hugging Face's apply_chat_template).
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    # Hugging Face's and llama.cpp's tojson: json.dumps's output (Jinja's own escapes <, >,
    # & and ' for HTML, which the engine does not).
    env.filters["tojson"] = lambda value, indent=None, separators=None: json.dumps(
        value, ensure_ascii=False, indent=indent, separators=separators
    )
    extra: dict[str, Any] = {} if next_step is None else {"agentsdk_next_step": next_step}
    if answer_only:
        extra["agentsdk_answer_only"] = True
    if unmade:
        extra["agentsdk_unmade"] = unmade
    return env.from_string(TEMPLATE.read_text()).render(
        messages=messages, tools=TOOLS, add_generation_prompt=True, **extra
    )


def test_a_hint_in_the_newest_result_asks_for_a_corrective_call() -> None:
    prompt = _render(HINTED)
    assert FIX in prompt and ANSWER not in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_a_plain_result_asks_for_the_answer() -> None:
    prompt = _render(REPORT)
    assert FIX not in prompt and ANSWER in prompt
    assert "Never repeat a function call you already made." in prompt


def test_an_older_hint_is_not_repeated_once_it_was_acted_on() -> None:
    # Said again under an old result, a small model copies it as its final answer.
    prompt = _render(HINTED, "view camera: 1 of 1 objects visible, background 62%")
    assert FIX not in prompt and ANSWER in prompt
    assert prompt.count("Never repeat a function call") == 2


def test_hint_must_start_a_line() -> None:
    prompt = _render("label: 'hint: none'")
    assert FIX not in prompt and ANSWER in prompt


FIX_ERROR = "That call failed. Do what the error says: if it says how to fix the call, fix it now"
NEXT = "If my request still needs another step, call its function now"


def test_a_failed_call_asks_for_a_corrective_call() -> None:
    # The connector writes a tool error as "Error: <message>" (agentsdk_openai._wire).
    prompt = _render("Error: res://spin.gd does not exist: write it first with write_script")
    assert FIX_ERROR in prompt and ANSWER not in prompt and NEXT not in prompt
    # Only the newest result: an error that was already acted on is not repeated.
    prompt = _render("Error: no such node", REPORT)
    assert FIX_ERROR not in prompt and ANSWER in prompt


def test_next_step_asks_for_the_next_call_or_the_answer() -> None:
    prompt = _render(REPORT, next_step=True)
    assert NEXT in prompt and ANSWER not in prompt
    assert "reply to me in plain text now" not in prompt  # no lean towards stopping
    # Off (the 0.5B model's setting) and unset read the same.
    assert _render(REPORT, next_step=False) == _render(REPORT)
    # A hint still asks for the fix, not a choice.
    hinted = _render(HINTED, next_step=True)
    assert FIX in hinted and NEXT not in hinted


def test_a_turn_without_calls_is_told_that_no_call_can_be_made() -> None:
    # tool_choice="none" (an escalated answer, the loop guard's last word): the 1.5B model
    # otherwise wrote out the calling instructions as its answer
    prompt = _render(REPORT, next_step=True, answer_only=True)
    last = prompt.rsplit("<|im_start|>system", 1)[1]
    assert last.startswith("\n" + ANSWER + " No function can be called now.")
    assert NEXT not in last
    assert last.endswith("<|im_end|>\n<|im_start|>assistant\n")


def test_each_tool_and_each_cue_starts_its_own_line() -> None:
    # trim_blocks eats the newline after a tag; these once ran together ("...}}{"name"...",
    # "...this model cannot view images]Never repeat...").
    prompt = _render(REPORT)
    assert '\n{"name": "fit_view", ' in prompt and '\n{"name": "render", ' in prompt
    # Calls are shown as the grammar makes the model write them (spaced, Qwen's own format).
    assert (
        '<|im_start|>assistant\n{"name": "fit_view", "arguments": {"names": ["box"]}}<|im_end|>'
        in prompt
    )
    assert "(right)\nNever repeat a function call" in prompt
    assert "hint: frame it\nThe result has a hint" in _render(REPORT + "\nhint: frame it")


def test_older_results_read_the_same_whatever_this_turn_asks() -> None:
    # The engine reuses the KV cache only up to the first token that differs from the last
    # prompt: a cue under an older result that followed this turn's kwargs (next step or
    # answer, answer only) made every turn that switched between them read the whole
    # conversation again. Only what follows the newest result may differ.
    older, newest = REPORT, "view camera: 1 of 1 objects visible\nbox: 31%, centre, red"
    prompts = [
        _render(older, newest, next_step=True),
        _render(older, newest, next_step=False),
        _render(older, newest, answer_only=True),
        _render(older, newest),
    ]
    cut = prompts[0].rindex(newest) + len(newest)
    assert all(p[:cut] == prompts[0][:cut] for p in prompts)
    assert len({p[cut:] for p in prompts}) == 3  # no kwargs and next_step=False read alike
    assert prompts[0][:cut].count("Never repeat a function call you already made.") == 1
    assert "reply to me in plain text now" not in prompts[0][:cut]


def test_an_unmade_part_is_named_in_the_last_cue() -> None:
    # The connector sets agentsdk_unmade when an answer came while a part the request named
    # was untouched (agentsdk_openai.local.unmade); the cue replaces the answer-or-step one,
    # and the one after a hint or an error, which stay under their result.
    asked = (
        'My request also asks for "a green box named plate", which no function call has done yet.'
    )
    call = " Call the function for that part of my request now.<|im_end|>\n"
    for results in ((REPORT,), (HINTED,), ("Error: no node 'plate'",)):
        prompt = _render(*results, next_step=True, unmade='"a green box named plate"')
        assert prompt.endswith(asked + call + "<|im_start|>assistant\n"), prompt[-300:]
        assert NEXT not in prompt and ANSWER not in prompt
    assert FIX in _render(HINTED, unmade='"a green box named plate"')
    # Everything before the last cue is the same as without it (the engine's cache holds).
    prompt = _render(REPORT, next_step=True, unmade='"a green box named plate"')
    plain = _render(REPORT, next_step=True)
    assert plain[: plain.index(NEXT)] == prompt[: prompt.index(asked)]
