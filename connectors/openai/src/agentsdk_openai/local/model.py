"""``LocalChatModel``: the OpenAI-compatible connector bound to a ``LocalEngine``.

On top of the plain connector it adds what only an engine we run ourselves allows:
tool calls constrained to the tool schemas (:mod:`.grammar`), the on-disk prefix cache
(:mod:`.prefix_cache`) and token traces for training (:mod:`.tokens`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
from agentsdk.http import CannotSend, TransportFailure
from agentsdk.tools import SchemaProblem, ToolSpec, compile_schema

from agentsdk import ModelError, ModelRequest, ModelResponse, StreamDelta, TextPart, ToolCallPart

from .._response import Completion
from .._wire import dumps
from ..model import OpenAIChatModel, _server_message
from ..profiles import engine_profile
from .announced import (
    announced_tool,
    announces_a_step,
    echoes_call_format,
    echoes_cue,
)
from .answers import echo_kind, echoes_request, listed, owned_up, without_pasted_json
from .as_asked import as_asked
from .engine import LocalEngine
from .grammar import TURN_GRAMMAR, parse_constrained, tool_call_grammar
from .history import without_superseded_hints
from .prefix_cache import PrefixCacheEvent
from .tokens import complete_with_tokens
from .unmade import (
    Part,
    another_kind_unmade,
    does_step,
    newest_request_at,
    pinned_makers,
    premature_part,
    unmade_parts,
)

__all__ = ["LocalChatModel", "changed_the_world"]

logger = logging.getLogger("agentsdk_openai.local")


def changed_the_world(request: ModelRequest) -> bool:
    """Whether the newest message of results holds a call of a world-changing tool (one of
    the request's tools with ``side_effects``); the tier policy and the cue both ask."""
    changing = {spec.name for spec in request.tools if spec.side_effects}
    last = request.messages[-1] if request.messages else None
    return last is not None and any(result.name in changing for result in last.tool_results)


def _may_need_a_step(request: ModelRequest) -> bool:
    """Whether the newest results leave the request open to another step: any call that
    changed the world does, reads do not (their turn writes the answer from what was read;
    under the next-step cue the 1.5B model re-rendered a finished scene until the loop
    guard stopped it). Tools that declare no side effects at all say nothing either way,
    so every result counts as a step there."""
    last = request.messages[-1] if request.messages else None
    if not any(spec.side_effects for spec in request.tools) or not (last and last.tool_results):
        return True
    return changed_the_world(request)


class LocalChatModel(OpenAIChatModel):
    """A model served by the embedded llama.cpp engine; the engine starts on first use.

    Args:
        engine: the engine that serves it (``LocalEngine.shared(name)`` for the usual one).
        constrained: sample tool calls under a grammar built from the tool schemas, so a
            call always names an offered tool and carries arguments that validate (free
            text stays possible with ``tool_choice="auto"``). False: the engine's own,
            unconstrained tool-call parsing, for comparison.
        prefix_cache: restore the KV state of the fixed start of the prompt (system turn
            and tools) from disk, or save it the first time it is seen.
        next_step: after a tool result, ask the model for the request's next step or the
            answer, rather than leaning it towards answering (multi-step builds need the
            former; a model too small to tell when a request is done re-calls under it).
            Only after a call that changed the world (a tool with ``side_effects``), or
            any call when no offered tool declares side effects; after reads the model
            is asked for the answer. None: the built-in model's own setting (True for the
            1.5B, False otherwise).
        default_temperature: the temperature of a request that sets none (llama.cpp's own
            default is 0.8, at which the small models slip on arithmetic they get right
            greedily). None leaves it to the server.
        default_max_tokens: the output-token cap of a request that sets none. A small
            model that slips into repeating itself would otherwise write until the context
            is full, minutes on a CPU; at the cap the turn fails with a clear
            ``ResponseTruncatedError``. None: no cap.
        answer_ahead: a warm-up given a run's first request (``Agent.run`` while its
            toolkits start, ``run_task`` while the task's setup runs) asks it then and
            keeps the answer for the turn that sends exactly that request, once; any
            other request is answered by the engine as usual (the 16 newest answers are
            kept). False: the warm-up only reads the system turn and tools.
        ask_for_unmade: an answer given while a part the user's request names ("a box
            named plate", "tree.glb") is mentioned by no call and no result since, or an
            output step it asks for ("render the result") went to no tool, is not taken:
            the call for that part is asked for, with a cue quoting it (:mod:`.unmade`),
            one part per answer and each once per run. False: every answer stands.

    ``aclose`` closes this model's connections but leaves the shared engine running
    for other agents; the engine stops at interpreter exit or on ``engine.stop()``.
    """

    def __init__(
        self,
        engine: LocalEngine,
        *,
        constrained: bool = True,
        prefix_cache: bool = True,
        next_step: bool | None = None,
        default_temperature: float | None = 0.0,
        default_max_tokens: int | None = 1024,
        answer_ahead: bool = True,
        ask_for_unmade: bool = True,
        **kwargs: Any,
    ):
        profile = engine_profile("local")
        capabilities = profile.model
        if engine.builtin is not None:
            capabilities = capabilities.model_copy(
                update={
                    "supports_tools": engine.builtin.supports_tools,
                    "context_window": engine.builtin.context_window,
                }
            )
        kwargs.setdefault("timeout", 600.0)  # CPU generation of a long answer is slow
        super().__init__(
            engine.model,
            base_url="http://127.0.0.1",  # replaced by the engine's address once it runs
            engine=profile,
            profile=capabilities,
            name=f"local:{engine.model}",
            **kwargs,
        )
        self.local_engine = engine
        self.constrained = constrained
        self.prefix_cache = prefix_cache
        self.default_temperature = default_temperature
        self.default_max_tokens = default_max_tokens
        if next_step is None:
            next_step = engine.builtin.next_step if engine.builtin is not None else False
        self.next_step = next_step
        self.prefix_events: list[PrefixCacheEvent] = []
        """What the prefix cache did for this model's requests (restored, saved...)."""
        self._grammars: dict[tuple[str, str | None], tuple[str | None, list[Any]]] = {}
        self._unconstrainable: set[str] = set()
        self.answer_ahead = answer_ahead
        self.ask_for_unmade = ask_for_unmade
        self._answering: set[bytes] = set()  # the requests warm-ups are asking
        self._ahead: dict[bytes, ModelResponse] = {}  # what they got, by request
        self.answered_ahead = 0
        """Turns answered by a warm-up before they asked (``answer_ahead``)."""

    def __repr__(self) -> str:
        return f"LocalChatModel(name={self.name!r}, engine={self.local_engine!r})"

    async def _endpoint(self) -> tuple[str, str | None]:
        await self.local_engine.start()
        return self.local_engine.base_url, self.local_engine.token

    async def __aenter__(self) -> LocalChatModel:
        await self.local_engine.start()
        return self

    async def warm_up(self, request: ModelRequest | None = None) -> None:
        """Start the engine and, given a run's first request, ask it now and keep the
        answer for the turn that sends it (``answer_ahead``; otherwise only put its system
        turn and tools in the KV cache, from the prefix cache). The agent calls this while
        its toolkits start, ``run_task`` while the task's setup runs: the first turn is
        written meanwhile instead of after them."""
        await self.local_engine.start()
        if request is None:
            return
        if not self.answer_ahead:
            request = self._with_defaults(request)
            await self._warm_prefix(request, self._constrains(request))
            return
        # Two warm-ups for one request (run_task's, then the agent's) ask it once: the
        # second waits for the first and finds the answer kept.
        key = self._key(request)
        while key in self._answering:  # noqa: ASYNC110 (polled: an Event is bound to one loop)
            await anyio.sleep(0.02)
        if key in self._ahead:
            return
        self._answering.add(key)
        try:
            response = await self._ask(request)
            if len(self._ahead) >= 16:  # runs that never asked (cancelled): forget the oldest
                del self._ahead[next(iter(self._ahead))]
            self._ahead[key] = response
        finally:
            self._answering.discard(key)

    def _key(self, request: ModelRequest) -> bytes:
        """What makes two requests the same to the engine: the body it would be sent."""
        request = self._with_defaults(request)
        return self.chat_body(request, constrained=self._constrains(request), stream=False)

    async def _answered_ahead(self, request: ModelRequest) -> ModelResponse | None:
        """The answer a warm-up got (or is getting) for exactly this request, given out
        once; None for any other request, which need not wait for it."""
        if not self._ahead and not self._answering:
            return None
        key = self._key(request)
        while key in self._answering:  # noqa: ASYNC110
            await anyio.sleep(0.02)
        response = self._ahead.pop(key, None)
        if response is not None:
            self.answered_ahead += 1
        return response

    # -- the Model protocol -------------------------------------------------------------

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One completion; constrained when tools are offered, with tokens when asked."""
        ahead = await self._answered_ahead(request)
        return ahead if ahead is not None else await self._ask(request)

    async def _ask(self, request: ModelRequest) -> ModelResponse:
        request = self._with_defaults(request)
        constrained = self._constrains(request)
        await self._warm_prefix(request, constrained)
        if request.settings.record_tokens:
            return await complete_with_tokens(self, request, constrained)
        try:
            response = await super().request(request)
        except ModelError as exc:
            if not (constrained and self._grammar_refused(exc, request)):
                raise
            return await super().request(request)
        if constrained:
            response = await self._make_announced_call(request, response)
            response = await self._make_unmade_part(request, response)
            response = await self._remake_another_kind(request, response)
            response = await self._make_premature_part(request, response)
            response = owned_up(request, response)
            response = as_asked(request, response)
        return without_pasted_json(request, response)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """Stream deltas, then the ``ModelResponse``; a constrained call arrives whole at the end."""
        ahead = await self._answered_ahead(request)
        request = self._with_defaults(request)
        constrained = self._constrains(request)
        if ahead is None:
            await self._warm_prefix(request, constrained)
        if ahead is not None or request.settings.record_tokens:
            # Answered whole: ahead of time, or for its token trace (llama.cpp's
            # /completion, read whole).
            response = ahead or await complete_with_tokens(self, request, constrained)
            if response.text:
                yield StreamDelta(text=response.text)
            for index, call in enumerate(response.tool_calls):
                yield _call_delta(index, call)
            yield response
            return
        if not constrained:
            async for item in super().stream(request):
                yield item
            return
        try:
            async for item in _calls_shown_whole(
                self._with_calls_made(request, super().stream(request))
            ):
                yield item
            return
        except ModelError as exc:
            if not self._grammar_refused(exc, request):
                raise
        async for item in super().stream(request):
            yield item

    async def _with_calls_made(
        self, request: ModelRequest, items: AsyncIterator[StreamDelta | ModelResponse]
    ) -> AsyncIterator[StreamDelta | ModelResponse]:
        async for item in items:
            if isinstance(item, ModelResponse):
                item = await self._make_announced_call(request, item)
                item = await self._make_unmade_part(request, item)
                item = await self._remake_another_kind(request, item)
                item = await self._make_premature_part(request, item)
                item = owned_up(request, item)
                item = as_asked(request, item)
            yield item

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
        _remember_asked((run, _asked_key(left[0])))
        keys = ", ".join(part.key for part in left)
        logger.info("%s answered with %s not done; asking for it", self.name, keys)
        choice = _tool_for_steps(request, left) or "required"
        # The call that makes the part under its name: told which part was left, the 1.5B
        # model sent the first part's call again (s18's p1 for p2).
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

    async def _answer_again(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """An answer that only repeats the template's cue, or the user's request, or that
        re-wrote the call that just succeeded, gets one more try, as a plain-text answer
        under the answer-leaning cue; if that echoes too, the first answer stands."""
        logger.info("%s did not answer (%.60r); asking for the answer", self.name, response.text)
        extra = dict(request.settings.extra)
        extra["chat_template_kwargs"] = {
            **(extra.get("chat_template_kwargs") or {}),
            "agentsdk_next_step": False,
        }
        again = await self._sample_again(
            request, {"tool_choice": "none", "extra": extra}, "the answer"
        )
        if (
            again is None
            or again.tool_calls
            or not again.text.strip()
            or echoes_cue(again.text)
            or echoes_call_format(again.text)
            or echoes_request(request, again)
        ):
            return response
        return again.model_copy(update={"usage": response.usage + again.usage})

    def _with_defaults(self, request: ModelRequest) -> ModelRequest:
        update: dict[str, Any] = {}
        if request.settings.temperature is None and self.default_temperature is not None:
            update["temperature"] = self.default_temperature
        if request.settings.max_tokens is None and self.default_max_tokens is not None:
            update["max_tokens"] = self.default_max_tokens
        if not update:
            return request
        settings = request.settings.model_copy(update=update)
        return request.model_copy(update={"settings": settings})

    # -- constrained tool calls -----------------------------------------------------------
    # The connector's request path is reused whole: `_body` swaps in the constrained body and
    # `_checked` reads the call out of the text, the only two places that differ.

    def _constrains(self, request: ModelRequest) -> bool:
        return (
            self.constrained
            and self.profile.supports_tools
            and bool(request.tools)
            and self._tools_json(request.tools) not in self._unconstrainable
        )

    def _body(self, request: ModelRequest, *, stream: bool, prompted: bool) -> bytes:
        if prompted:
            return super()._body(request, stream=stream, prompted=prompted)
        return self.chat_body(request, constrained=self._constrains(request), stream=stream)

    def _checked(self, completion: Completion, request: ModelRequest) -> ModelResponse:
        if self._constrains(request):
            # The server saw no tools, so the call (if any) is still text: read it, and only
            # text the grammar shaped counts as a call.
            text = "".join(p.text for p in completion.parts if isinstance(p, TextPart))
            if request.settings.tool_choice == "none":  # no call is possible: text it is
                parts: list[TextPart | ToolCallPart] = [TextPart(text=text)] if text else []
            else:
                parts = parse_constrained(text, {tool.name for tool in request.tools})
            finish = completion.finish_reason
            if any(isinstance(p, ToolCallPart) for p in parts) and finish in (None, "stop", "eos"):
                finish = "tool_calls"
            completion = replace(completion, parts=parts, finish_reason=finish)
        return super()._checked(completion, request)

    def grammar_for(
        self, tools: list[ToolSpec], tool_choice: str | None
    ) -> tuple[str | None, list[Any]]:
        """(grammar, tools as wire JSON) for a turn; cached per tool set and choice."""
        key = (self._tools_json(tools), tool_choice)
        hit = self._grammars.get(key)
        if hit is None:
            hit = (tool_call_grammar(tools, tool_choice), json.loads(key[0]))
            if len(self._grammars) > 32:
                self._grammars.clear()
            self._grammars[key] = hit
        return hit

    def _steps(self, request: ModelRequest) -> bool:
        """Whether this turn is asked for the next step or the answer (the next-step cue),
        unless the request's settings say otherwise."""
        kwargs = request.settings.extra.get("chat_template_kwargs") or {}
        if "agentsdk_next_step" in kwargs:
            return bool(kwargs["agentsdk_next_step"])
        return self.next_step and _may_need_a_step(request)

    def chat_body(self, request: ModelRequest, *, constrained: bool, stream: bool) -> bytes:
        """The chat request body; constrained: no ``tools`` field, our grammar instead.

        llama.cpp refuses a grammar next to ``tools``, so the tools reach the chat template
        as ``chat_template_kwargs.agentsdk_tools`` (our template reads them there).
        """
        shown = without_superseded_hints(request.messages)
        if shown is not request.messages:
            request = request.model_copy(update={"messages": shown})
        extra = dict(request.settings.extra)
        kwargs = dict(extra.get("chat_template_kwargs") or {})
        if request.settings.tool_choice == "none" and request.tools:
            # No call is possible this turn (an escalated answer, the loop guard's last
            # word): the cue says so, or the 1.5B model writes out the calling format.
            kwargs.setdefault("agentsdk_answer_only", True)
        elif self._steps(request):
            kwargs.setdefault("agentsdk_next_step", True)
        if not constrained:
            narrowed = extra.pop(TURN_GRAMMAR, None) is not None  # constrained turns only
            if kwargs or narrowed:
                extra["chat_template_kwargs"] = kwargs
                settings = request.settings.model_copy(update={"extra": extra})
                request = request.model_copy(update={"settings": settings})
            return super()._body(request, stream=stream, prompted=False)
        grammar, wire_tools = self.grammar_for(request.tools, request.settings.tool_choice)
        grammar = extra.pop(TURN_GRAMMAR, None) or grammar  # a turn's own, narrower grammar
        kwargs["agentsdk_tools"] = wire_tools
        extra["chat_template_kwargs"] = kwargs
        if grammar is not None:
            extra["grammar"] = grammar
        settings = request.settings.model_copy(update={"extra": extra})
        plain = request.model_copy(
            update={"tools": [], "output_schema": None, "settings": settings}
        )
        return super()._body(plain, stream=stream, prompted=False)

    def _grammar_refused(self, exc: ModelError, request: ModelRequest) -> bool:
        """The engine could not build our grammar (a schema llguidance rejects): go unconstrained."""
        if exc.status_code != 400 or "grammar" not in str(exc).lower():
            return False
        logger.warning(
            "%s: the engine refused the tool-call grammar (%s); these tools run unconstrained",
            self.name,
            exc,
        )
        self._unconstrainable.add(self._tools_json(request.tools))
        return True

    # -- the prefix cache and llama.cpp's own endpoints ------------------------------------

    async def _warm_prefix(self, request: ModelRequest, constrained: bool) -> None:
        """Make sure the engine holds the KV state of this request's system turn and tools."""
        if not self.prefix_cache:
            return
        await self.local_engine.start()
        cache = self.local_engine.prefix_cache
        if cache is None:
            return
        first = request.messages[0] if request.messages else None
        system = first.text if first is not None and first.role == "system" else None
        # Constrained, the tools are in the prompt on every turn that has them, a
        # tool_choice="none" turn too (its grammar allows text only); a prefix without them
        # would be restored over the slot's whole conversation, which then has to be read
        # again (~105 s for 5,300 tokens of a finance run on 2 cores).
        offered = bool(request.tools) and (constrained or request.settings.tool_choice != "none")
        tools_json = self._tools_json(request.tools) if offered else ""
        memo = (system, tools_json, constrained)
        event = cache.remembered(memo)
        if event is None:
            payload: dict[str, Any] = {
                "messages": [{"role": "system", "content": system}] if system is not None else [],
                "add_generation_prompt": False,
            }
            if offered and constrained:
                payload["chat_template_kwargs"] = {"agentsdk_tools": json.loads(tools_json)}
            elif offered:
                payload["tools"] = json.loads(tools_json)
            try:
                prompt = (await self.post_engine("/apply-template", payload))["prompt"]
                if not await self._prompt_starts_with(request, constrained, prompt):
                    # Restoring it would only throw away what the slot holds.
                    logger.info("prefix cache: this turn's prompt does not start with the prefix")
                    return
                ids = await self.tokenize(prompt)
            except (ModelError, KeyError, TypeError) as exc:
                logger.warning("prefix cache: cannot render the prefix (%s); skipping it", exc)
                return
            event = await cache.ensure(ids, self.post_engine)
            cache.remember(memo, event)
        if not self.prefix_events or self.prefix_events[-1] is not event:
            self.prefix_events.append(event)
            del self.prefix_events[:-100]  # a long-lived model keeps the recent ones

    async def _prompt_starts_with(
        self, request: ModelRequest, constrained: bool, prefix: str
    ) -> bool:
        """Whether the prompt the engine renders for ``request`` begins with ``prefix``."""
        body = json.loads(self.chat_body(request, constrained=constrained, stream=False))
        body.pop("stream", None)
        prompt = (await self.post_engine("/apply-template", body))["prompt"]
        return isinstance(prompt, str) and prompt.startswith(prefix)

    async def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` as the engine reads a prompt (special tokens parsed)."""
        data = await self.post_engine(
            "/tokenize", {"content": text, "add_special": True, "parse_special": True}
        )
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list):
            raise ModelError(f"{self.name}: /tokenize sent no tokens", model_name=self.name)
        return [int(t) for t in tokens]

    async def detokenize(self, ids: list[int]) -> str:
        """The text of token ids, decoded by the engine."""
        data = await self.post_engine("/detokenize", {"tokens": ids})
        return str(data.get("content", "")) if isinstance(data, dict) else ""

    async def post_engine(self, path: str, payload: dict[str, Any] | bytes) -> Any:
        """POST JSON to one of llama.cpp's own endpoints (``/tokenize``, ``/slots/0?...``)."""
        await self.local_engine.start()
        headers = {**self._headers, "Authorization": f"Bearer {self.local_engine.token}"}
        body = payload if isinstance(payload, bytes) else dumps(payload).encode("utf-8")
        url = self.local_engine.address + path
        try:
            try:
                reply = await self._http().post(url, body, headers, self.timeout, False)
            except TransportFailure:
                # Most likely a pooled connection the server closed while idle: one more try
                # on a fresh connection (the chat path does the same).
                reply = await self._http().post(url, body, headers, self.timeout, False)
        except (TransportFailure, CannotSend) as exc:
            raise ModelError(
                f"{self.name}: {path.split('?')[0]} failed: {exc}",
                model_name=self.name,
                retryable=True,
            ) from None
        if not reply.ok:
            raise ModelError(
                f"{self.name}: {path.split('?')[0]} answered HTTP {reply.status}: {_server_message(reply)}",
                status_code=reply.status,
                model_name=self.name,
            )
        try:
            return json.loads(reply.body)
        except ValueError:
            raise ModelError(
                f"{self.name}: {path.split('?')[0]} sent a body that is not JSON",
                model_name=self.name,
            ) from None


def _validates(request: ModelRequest, calls: list[ToolCallPart]) -> bool:
    """Every call names an offered tool and its arguments pass that tool's schema (False
    when a schema is beyond the compiled checks: the grammar then decides)."""
    specs = {spec.name: spec for spec in request.tools}
    for call in calls:
        spec = specs.get(call.name)
        if spec is None or call.raw_arguments is not None:
            return False
        try:
            if compile_schema(spec.parameters)(call.arguments):
                return False
        except SchemaProblem:
            return False
    return True


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


def _call_delta(index: int, call: ToolCallPart) -> StreamDelta:
    arguments = call.raw_arguments if call.raw_arguments is not None else dumps(call.arguments)
    return StreamDelta(tool_call_index=index, tool_name=call.name, arguments_delta=arguments)


async def _calls_shown_whole(
    items: AsyncIterator[StreamDelta | ModelResponse],
) -> AsyncIterator[StreamDelta | ModelResponse]:
    """A constrained stream as a caller should see it: text as it comes, a call whole.

    The engine streams a call as the text of its JSON; those deltas are held back and the
    call is shown as tool-call deltas just before the response that carries it.
    """
    held: list[StreamDelta] = []
    mode = ""  # decided by the first visible character: "call" ({) or "text"
    async for item in items:
        if isinstance(item, ModelResponse):
            if mode != "call":
                for delta in held:
                    yield delta
            for index, call in enumerate(item.tool_calls):
                yield _call_delta(index, call)
            yield item
            return
        if mode == "text":
            yield item
            continue
        if mode == "call":
            continue
        held.append(item)
        seen = "".join(d.text for d in held).lstrip()
        if seen:
            mode = "call" if seen.startswith("{") else "text"
            if mode == "text":
                for delta in held:
                    yield delta
                held = []
