"""What :class:`~agentsdk_openai.local.model.LocalChatModel` asks its engine again, and
how it mends what it got, after a constrained turn.

Each step takes the turn's response and gives it back, or one sampled again:

- a call announced in prose and not made, or the calling format written out, becomes that
  call (:mod:`.announced`);
- an answer while a part of the request is undone becomes the call for that part, and a
  call that makes a part as another kind of thing, or needs a part not yet made, becomes
  the call that makes it (:mod:`.unmade`);
- an answer that echoes a cue or the request is asked for again as text, and so is a
  third call in a row that only turns one tool's numbers once the request is done
  (:func:`drifting`), or a turn that only makes again what was made (:func:`repeats_a_success`),
  which, with a part of the request left, becomes the call for that part;
- then the answer's claims of files no tool wrote are owned up to (:mod:`.answers`), the
  calls mended to the request (:mod:`.as_asked`), and a refused call sent again unchanged
  replaced by the call its refusal offered (:mod:`.offers`).
"""

from __future__ import annotations

import logging
from typing import Any

from agentsdk.loopguard import NOTHING_CHANGED
from agentsdk.tools import ToolSpec

from agentsdk import ModelError, ModelRequest, ModelResponse, TextPart, ToolCallPart

from ..model import OpenAIChatModel
from .announced import announced_tool, announces_a_step, echoes_call_format, echoes_cue
from .answers import echo_kind, echoes_request, listed, owned_up
from .as_asked import as_asked
from .grammar import TURN_GRAMMAR, tool_call_grammar
from .offers import offer_taken, valid_arguments
from .unmade import (
    Part,
    another_kind_unmade,
    does_step,
    named_in,
    newest_request_at,
    pinned_makers,
    premature_part,
    unmade_parts,
)

__all__ = ["Reasking", "changed_the_world", "drifting", "repeats_a_success"]

logger = logging.getLogger("agentsdk_openai.local")


def changed_the_world(request: ModelRequest) -> bool:
    """Whether the newest message of results holds a call of a world-changing tool (one of
    the request's tools with ``side_effects``); the tier policy and the cue both ask."""
    changing = {spec.name for spec in request.tools if spec.side_effects}
    last = request.messages[-1] if request.messages else None
    return last is not None and any(result.name in changing for result in last.tool_results)


class Reasking(OpenAIChatModel):
    """The asking again of :class:`~agentsdk_openai.local.model.LocalChatModel` (its base):
    what a constrained turn's response goes through before the caller gets it
    (:meth:`_mended`)."""

    ask_for_unmade: bool

    def _constrains(self, request: ModelRequest) -> bool:
        """Whether this request is sampled under the tools' grammar."""
        raise NotImplementedError

    def _steps(self, request: ModelRequest) -> bool:
        """Whether this request's turn is asked for the request's next step."""
        raise NotImplementedError

    async def _mended(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """A constrained turn's response after every step of the module's list."""
        response = await self._make_announced_call(request, response)
        response = await self._make_unmade_part(request, response)
        response = await self._remake_another_kind(request, response)
        response = await self._make_premature_part(request, response)
        response = await self._answer_when_drifting(request, response)
        response = owned_up(request, response)
        response = offer_taken(request, as_asked(request, response))
        # Last: a call is compared with those made as it would be sent, mended.
        return await self._past_a_repeat(request, response)

    async def _make_announced_call(
        self, request: ModelRequest, response: ModelResponse
    ) -> ModelResponse:
        """A text answer that announces a call it did not make ("I will call the
        export_asset function") gets that call: sampled again with the grammar allowing only
        that tool (:mod:`.announced`); one that writes out the template's calling format
        instead of a call is sampled again with a call required; a call written out after
        prose (read by ``parse_constrained``, so not shaped by the grammar) is sampled again
        under the grammar for that tool, so its arguments validate. Anything else, or a
        second answer without the call, leaves the response as it was."""
        if request.settings.tool_choice not in (None, "auto"):
            return response
        calls = response.tool_calls
        if calls:
            # Only a call written after prose comes with text: the grammar's calls open with "{".
            if not response.text.strip():
                return response
            if _repeats_the_newest_call(request, calls[0]):
                # Prose, then the call that just succeeded written out again (the 1.5B
                # model did so turn after turn on godot/box-node): not a step but a restart,
                # so the answer is asked for; the prose stands if that fails.
                prose = response.model_copy(update={"parts": [TextPart(text=response.text)]})
                return await self._answer_again(request, prose)
            if _validates(request, calls):
                # Written after prose, yet well-formed and valid for its tool (the 1.5B model
                # often opens with the template's calling instructions, then calls): keep
                # the calls, and any prose that is not that echo, without sampling again.
                said = response.text
                if echoes_call_format(said) or announced_tool(said, [c.name for c in calls]):
                    return response.model_copy(update={"parts": list(calls)})
                return response
            name: str | None = calls[0].name
        else:
            name = announced_tool(response.text, [tool.name for tool in request.tools])
            if name is None and echoes_call_format(response.text):
                if _after_a_read(request):
                    # After a read the turn writes the answer: forced to call, the 1.5B model
                    # re-read with compare on finance/compare-aapl-ibm turn after turn.
                    return await self._answer_again(request, response)
                name = "required"  # it wrote out how to call instead of calling: any tool
            echo = echo_kind(request, response) if name is None else None
            restated = echo is not None
            if echo == "clause" and _after_a_read(request) and not _any_side_effects(request):
                # Tools that only read (finance's), and a clause of the request after "To":
                # a goal stated once the results are in is an answer not written, not a step
                # not taken (asked for a call, the 1.5B model would read again with compare
                # on finance/compare-aapl-ibm). A whole request restated still gets a call.
                return await self._answer_again(request, response)
            if (
                name is None
                and self._steps(request)
                and (restated or announces_a_step(response.text))
            ):
                # Asked for the next step or the answer, it restated the request (the 1.5B
                # model did on godot/red-target-in-frame after creating the empty scene) or
                # said what it will do next without naming a tool ("I need to add the Top
                # cube", blender/stack): the request is not done, so a call is asked for.
                name = "required"
            if name is None and (restated or echoes_cue(response.text)):
                return await self._answer_again(request, response)
            if name is not None and name in _just_succeeded(request):
                # "I will call export_asset" right after export_asset succeeded restates
                # what was done (the 1.5B did, turn after turn); it is the answer.
                return response
        if name is None or (request.last_turn and not calls):
            # On the run's last turn a call would end the run on its limit, unanswered.
            return response
        logger.info("%s announced a call (%s) without making it; asking for it", self.name, name)
        again = await self._sample_again(request, {"tool_choice": name}, f"the call to {name}")
        if again is None or not again.tool_calls or again.text.strip():
            return response
        lead: list[TextPart | ToolCallPart] = (
            [TextPart(text=response.text)] if response.text else []
        )
        return again.model_copy(
            update={"parts": lead + list(again.tool_calls), "usage": response.usage + again.usage}
        )

    async def _make_unmade_part(
        self, request: ModelRequest, response: ModelResponse
    ) -> ModelResponse:
        """An answer given while a part of the user's request is still undone (a name or
        file no call made since the request that did not fail, and no such result,
        mentions; an output step no such call went to a tool for: :mod:`.unmade`) gets a
        call for that part instead: sampled again with a call required (the one tool
        that does it, when only an output step is left) and the cue quoting what is left.
        Only once a call has been made (after a result of any kind), one part per answer
        and each once per run, never on the run's last turn; the answer stands if no call
        comes, or once each part has been asked for."""
        last = request.messages[-1] if request.messages else None
        if (
            not self.ask_for_unmade
            or request.last_turn  # a call now would end the run on its limit, unanswered
            or response.tool_calls
            or not response.text.strip()
            or request.settings.tool_choice not in (None, "auto")
            or last is None
            or not last.tool_results
        ):
            return response
        run = _first_call_id(request)
        left = [p for p in unmade_parts(request) if (run, _asked_key(p)) not in _ASKED]
        if not left:
            return response
        # The cue lists every part left, but only the first counts as asked: a turn makes
        # one call, and with all of them marked, "render the result" was never asked for
        # after the cue that listed it with "a cube named Lid" got only the Lid made. So a
        # run asks at most once per part, one part per answer.
        keys = ", ".join(part.key for part in left)
        logger.info("%s answered with %s not done; asking for it", self.name, keys)
        return await self._call_for_left(request, response, run, left)

    async def _call_for_left(
        self, request: ModelRequest, response: ModelResponse, run: str, left: list[Part]
    ) -> ModelResponse:
        """The call for the first of the parts ``left``, recorded as asked for in ``run``:
        with the one tool that does every step left, else any call, held under constrained
        sampling to the tools that make that part under its name (told which part was left,
        the 1.5B model sent the first part's call again: s18's p1 for p2)."""
        _remember_asked((run, _asked_key(left[0])))
        choice = _tool_for_steps(request, left) or "required"
        pinned = pinned_makers(request, left[0]) if self._constrains(request) else []
        return await self._call_for(request, response, left, choice, pinned)

    async def _remake_another_kind(
        self, request: ModelRequest, response: ModelResponse
    ) -> ModelResponse:
        """A call that would make a part the request names, not yet made, as another kind
        of thing (a light named ``Bulb`` for "a point light named Bulb" made as a plane; a
        point light named ``lamp`` for "a white sphere named lamp") is sampled again under
        the grammar that holds the tools making the kind asked for to that name
        (:func:`~.unmade.pinned_makers`), with the cue quoting the part, and replaced by
        that call. When no offered tool's name says it makes that kind (Godot's one
        ``add_node``), every maker is allowed and the cue alone says what kind. Asked only
        once per response, for the first such call; the response stands if no call comes.
        Without this the name was dropped (:mod:`.as_asked`) and the 1.5B model went on to
        other calls, never making the part (new users' prompts s20/1 and s20/5)."""
        if not self._may_call_for_a_part(request, response):
            return response
        part = another_kind_unmade(request, response.tool_calls)
        pinned = pinned_makers(request, part) if part is not None else []
        if part is None or not pinned:
            return response
        logger.info("%s made %s as another kind; asking for it", self.name, part.key)
        return await self._call_for(request, response, [part], "required", pinned)

    def _may_call_for_a_part(self, request: ModelRequest, response: ModelResponse) -> bool:
        """Whether a call in ``response`` may be replaced by the call for a part of the
        request: the model asks for parts, the turn is not the run's last, the request is
        constrained and lets the model choose its call."""
        return (
            self.ask_for_unmade
            and not request.last_turn
            and bool(response.tool_calls)
            and request.settings.tool_choice in (None, "auto", "required")
            and self._constrains(request)
        )

    async def _make_premature_part(
        self, request: ModelRequest, response: ModelResponse
    ) -> ModelResponse:
        """A call that needs a part the request asks for made first, while nothing has made
        it (:func:`~.unmade.premature_part`: ``export_asset(names=["A", "B", "C"])`` with
        only A made, or the call after a failure that says C is missing) is replaced by the
        call that makes that part: sampled again under the grammar of the tools that make
        its kind, holding its name (:func:`~.unmade.pinned_makers`), with the cue quoting
        it. Once per part per run (a part that cannot be made is not asked for again and
        again), never on the run's last turn; the response stands if no call comes."""
        if not self._may_call_for_a_part(request, response):
            return response
        part = premature_part(request, response.tool_calls)
        if part is None:
            return response
        run = _first_call_id(request)
        key = (run, f"premature:{part.key.lower()}")
        pinned = pinned_makers(request, part)
        if not pinned or key in _ASKED:
            return response
        if run:  # before the run's first call there is no run id to keep it under
            _remember_asked(key)
        logger.info("%s called for %s before making it; asking for it", self.name, part.key)
        return await self._call_for(request, response, [part], "required", pinned)

    async def _call_for(
        self,
        request: ModelRequest,
        response: ModelResponse,
        left: list[Part],
        choice: str,
        pinned: list[ToolSpec],
    ) -> ModelResponse:
        """The call for the first of the parts ``left``, sampled again under the cue that
        quotes them all (``agentsdk_unmade``) with ``tool_choice`` ``choice``, and, given
        ``pinned`` tools, the grammar allowing only those; it replaces ``response``, whose
        usage it adds. ``response`` stands if no call comes."""
        extra = dict(request.settings.extra)
        extra["chat_template_kwargs"] = {
            **(extra.get("chat_template_kwargs") or {}),
            "agentsdk_unmade": listed(left),
        }
        if pinned:
            extra[TURN_GRAMMAR] = tool_call_grammar(pinned, "required")
        again = await self._sample_again(
            request, {"tool_choice": choice, "extra": extra}, f"the call for {left[0].key}"
        )
        if again is None or not again.tool_calls:
            return response
        return again.model_copy(
            update={"parts": list(again.tool_calls), "usage": response.usage + again.usage}
        )

    async def _answer_when_drifting(
        self, request: ModelRequest, response: ModelResponse
    ) -> ModelResponse:
        """A third call in a row of one world-changing tool that changes only numbers (a
        camera moved a metre, then a metre more), once every part and step the request
        names is done (:func:`drifting`): the answer is asked for in its place; the call
        stands if no answer comes. On a new user's prompt (s24/1) the 1.5B model made both
        parts, then moved the camera a metre a turn, unasked, until the run's turns ran out."""
        if request.settings.tool_choice not in (None, "auto") or not drifting(request, response):
            return response
        logger.info("%s: %s again, only its numbers changed, with the request done",
                    self.name, response.tool_calls[0].name)  # fmt: skip
        answer = await self._answer_again(request, ModelResponse(parts=[TextPart(text="")]))
        return response if answer.tool_calls or not answer.text.strip() else answer

    async def _past_a_repeat(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """A turn whose every call repeats, name and arguments, a world-changing call made
        since the request without an error (:func:`repeats_a_success`): with every part the
        request names done, the answer is asked for in its place; with a part left, the call
        for that part, once per part per run. The response stands if nothing comes. On a new
        user's prompt (s25/7) the 1.5B model, both parts made, sent the first part's add_node
        again, then, refused, set its mesh to a file, created the scene again and at last a
        new one, until its turns ran out."""
        if (
            request.settings.tool_choice not in (None, "auto")
            or request.last_turn
            or not repeats_a_success(request, response)
        ):
            return response
        start = newest_request_at(request)
        if start is None or not named_in(request.messages[start].text):
            return response
        run = _first_call_id(request)
        left = [p for p in unmade_parts(request) if (run, _asked_key(p)) not in _ASKED]
        if not left:
            if unmade_parts(request):
                return response  # a part left was asked for already: no second ask
            logger.info("%s: %s made again, with the request done; asking for the answer",
                        self.name, response.tool_calls[0].name)  # fmt: skip
            # Any text is taken: held to the answer checks (a cue, a calling format or the
            # request echoed), the 1.5B model's answer was refused, the repeat went through,
            # and the model went on to make a second main scene (s25/7). A poor answer
            # leaves the work as it is; the loop did not.
            answer = await self._answer_again(
                request, ModelResponse(parts=[TextPart(text="")]), strict=False
            )
            return response if answer.tool_calls or not answer.text.strip() else answer
        if not self._may_call_for_a_part(request, response):
            return response
        logger.info("%s: %s made again, with %s not done; asking for it",
                    self.name, response.tool_calls[0].name, left[0].key)  # fmt: skip
        return await self._call_for_left(request, response, run, left)

    async def _sample_again(
        self, request: ModelRequest, settings: dict[str, Any], what: str
    ) -> ModelResponse | None:
        """The request once more with these settings changed; None (logged) if it fails,
        so the first response stands."""
        changed = request.settings.model_copy(update=settings)
        try:
            return await super().request(request.model_copy(update={"settings": changed}))
        except ModelError as exc:
            logger.warning("%s: asking again for %s failed (%s)", self.name, what, exc)
            return None

    async def _answer_again(
        self, request: ModelRequest, response: ModelResponse, *, strict: bool = True
    ) -> ModelResponse:
        """An answer that only repeats the template's cue, or the user's request, or that
        re-wrote the call that just succeeded, gets one more try, as a plain-text answer
        under the answer-leaning cue; if that echoes too, the first answer stands. Not
        ``strict``, any text without a call is taken."""
        logger.info("%s did not answer (%.60r); asking for the answer", self.name, response.text)
        extra = dict(request.settings.extra)
        extra["chat_template_kwargs"] = {
            **(extra.get("chat_template_kwargs") or {}),
            "agentsdk_next_step": False,
        }
        again = await self._sample_again(
            request, {"tool_choice": "none", "extra": extra}, "the answer"
        )
        if again is None or again.tool_calls or not again.text.strip():
            return response
        if strict and (
            echoes_cue(again.text)
            or echoes_call_format(again.text)
            or echoes_request(request, again)
        ):
            return response
        return again.model_copy(update={"usage": response.usage + again.usage})


def drifting(request: ModelRequest, response: ModelResponse) -> bool:
    """The response's one call is the third in a row, each the whole of its turn, of one
    world-changing tool with the same arguments but for numbers that change each time, the
    two before it done without an error, and the newest request names parts, every one of
    them done (:func:`~.unmade.unmade_parts` is empty): no step of the request, only a knob
    turned."""
    calls = response.tool_calls
    if len(calls) != 1 or calls[0].raw_arguments is not None:
        return False
    spec = next((t for t in request.tools if t.name == calls[0].name), None)
    start = newest_request_at(request)
    if spec is None or not spec.side_effects or start is None:
        return False
    after = request.messages[start + 1 :]
    turns = [m.tool_calls for m in after if m.role == "assistant"][-2:]
    failed = {r.call_id for m in after for r in m.tool_results if r.is_error}
    if len(turns) < 2 or any(len(t) != 1 or t[0].id in failed for t in turns):
        return False
    chain = [turns[0][0], turns[1][0], calls[0]]
    if not (_nudged(chain[0], chain[1]) and _nudged(chain[1], chain[2])):
        return False
    return bool(named_in(request.messages[start].text)) and not unmade_parts(request)


def repeats_a_success(request: ModelRequest, response: ModelResponse) -> bool:
    """Every call of the response, each whole, repeats, name and arguments, a call of a
    world-changing tool made since the newest request whose result came back without an
    error (or with only the loop guard's note that it changed nothing): a call that makes a part (its tool's ``creates``) whenever it was made, any
    other call when nothing else changed the world since (a render after a change of
    colour is new). Nothing in the turn is new."""
    calls = response.tool_calls
    start = newest_request_at(request)
    if not calls or start is None or any(c.raw_arguments is not None for c in calls):
        return False
    tools = {spec.name: spec for spec in request.tools if spec.side_effects}
    after = request.messages[start + 1 :]
    # A call that changed nothing (the loop guard's note) was valid: as good as done. On
    # s17/4 the 1.5B model sent the same set_transform of the Ball twice, each changing
    # nothing, and the loop guard ended the run with the camera Cam never made.
    done = {
        r.call_id
        for m in after
        for r in m.tool_results
        if not r.is_error or r.text.startswith(NOTHING_CHANGED)
    }
    made = [
        (c.name, c.arguments)
        for m in after
        if m.role == "assistant"
        for c in m.tool_calls
        if c.id in done and c.name in tools
    ]

    def repeated(call: ToolCallPart) -> bool:
        key = (call.name, call.arguments)
        if key not in made:
            return False
        spec = tools[call.name]
        if spec.creates is not None and isinstance(call.arguments.get(spec.creates), str):
            return True
        last = len(made) - 1 - made[::-1].index(key)
        return all(other == key for other in made[last:])

    return all(repeated(c) for c in calls)


def _nudged(a: ToolCallPart, b: ToolCallPart) -> bool:
    """Two calls of one tool with the same arguments but for numbers, some of them changed."""
    if a.name != b.name or set(a.arguments) != set(b.arguments) or a.arguments == b.arguments:
        return False
    return all(
        a.arguments[k] == b.arguments[k] or (_numeric(a.arguments[k]) and _numeric(b.arguments[k]))
        for k in a.arguments
    )


def _numeric(value: object) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_numeric(v) for v in value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _validates(request: ModelRequest, calls: list[ToolCallPart]) -> bool:
    """Every call names an offered tool and its arguments pass that tool's schema (False
    when a schema is beyond the compiled checks: the grammar then decides)."""
    return all(
        call.raw_arguments is None and valid_arguments(request, call.name, call.arguments)
        for call in calls
    )


def _repeats_the_newest_call(request: ModelRequest, call: ToolCallPart) -> bool:
    """``call`` is, name and arguments, a call of the newest assistant turn whose result
    came back without an error."""
    if len(request.messages) < 2 or not request.messages[-1].tool_results:
        return False
    succeeded = {r.call_id for r in request.messages[-1].tool_results if not r.is_error}
    return any(
        made.id in succeeded and made.name == call.name and made.arguments == call.arguments
        for made in request.messages[-2].tool_calls
    )


def _any_side_effects(request: ModelRequest) -> bool:
    """Some offered tool declares side effects (so the toolkit tells reads from writes)."""
    return any(spec.side_effects for spec in request.tools)


def _after_a_read(request: ModelRequest) -> bool:
    """The newest message holds results, none of them from a world-changing tool (a tool
    that declares no side effects reads, here: finance's tools declare none)."""
    last = request.messages[-1] if request.messages else None
    return bool(last and last.tool_results) and not changed_the_world(request)


def _just_succeeded(request: ModelRequest) -> set[str]:
    """The tools whose results, without an error, are the newest message of the request."""
    last = request.messages[-1] if request.messages else None
    return {r.name for r in last.tool_results if not r.is_error} if last is not None else set()


_ASKED: dict[tuple[str, str], None] = {}
"""(run, part) pairs a call was asked for (:meth:`LocalChatModel._make_unmade_part`); a
run is the id of its first call, unique to it, so both tiers' models share the record."""
_ASKED_KEPT = 1024


def _remember_asked(key: tuple[str, str]) -> None:
    """Record that a run asked for a part, keeping the newest :data:`_ASKED_KEPT`."""
    _ASKED[key] = None
    while len(_ASKED) > _ASKED_KEPT:
        del _ASKED[next(iter(_ASKED))]


def _tool_for_steps(request: ModelRequest, parts: list[Part]) -> str | None:
    """The one offered tool that does every output step left, when only steps are left:
    the call asked for is then that tool's (asked for "a screenshot", the 1.5B model called
    fit_view once more on godot/red-target-in-frame)."""
    if not parts or any(part.kind != "step" for part in parts):
        return None
    doing = [t.name for t in request.tools if all(does_step(t.name, p.key) for p in parts)]
    return doing[0] if len(doing) == 1 else None


def _asked_key(part: Part) -> str:
    """A part's key in :data:`_ASKED`: its kind and key, so a name asked for as unmade is
    asked for once more if the call that then made it made another kind of thing."""
    return f"{part.kind}:{part.key.lower()}"


def _first_call_id(request: ModelRequest) -> str:
    """The id of the first call made since the newest user message (one per run)."""
    start = newest_request_at(request)
    for message in request.messages[0 if start is None else start + 1 :]:
        if message.tool_calls:
            return message.tool_calls[0].id
    return ""
