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
from agentsdk.tools import ToolSpec

from agentsdk import (
    ModelError,
    ModelRequest,
    ModelResponse,
    ResponseTruncatedError,
    StreamDelta,
    TextPart,
    ToolCallPart,
)

from .._response import Completion
from .._wire import dumps
from ..model import _server_message
from ..profiles import engine_profile
from .answers import whole_sentences, without_pasted_json
from .engine import LocalEngine
from .grammar import TURN_GRAMMAR, parse_constrained, tool_call_grammar
from .history import without_superseded_hints
from .prefix_cache import PrefixCacheEvent
from .reask import Reasking, changed_the_world
from .tokens import complete_with_tokens

__all__ = ["LocalChatModel", "changed_the_world"]

logger = logging.getLogger("agentsdk_openai.local")


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


class LocalChatModel(Reasking):
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
        except ResponseTruncatedError as exc:
            rescued = await self._cut_off(request, exc) if constrained else None
            if rescued is None:
                raise
            return without_pasted_json(request, rescued)
        except ModelError as exc:
            if not (constrained and self._grammar_refused(exc, request)):
                raise
            return await super().request(request)
        if constrained:
            response = await self._mended(request, response)
        return without_pasted_json(request, response)

    async def _cut_off(
        self, request: ModelRequest, exc: ResponseTruncatedError
    ) -> ModelResponse | None:
        """An answer cut off at the output-token limit: its whole calls, when it has any
        (the cut-off rest dropped), else, for a text answer when a step of the request is
        left, the call the mends ask for in its place, else its whole sentences, repeats
        left out (:func:`~.answers.whole_sentences`); or None (the error stands). On new
        users' prompts the 1.5B model wrote 1,024 tokens of text after making the first of
        two parts (s23/7), or after a whole first call of its turn (s24/7), and the run
        ended on the error."""
        cut = exc.response
        if cut is None:
            return None
        whole = [call for call in cut.tool_calls if call.raw_arguments is None]
        if whole:
            logger.info("%s: an answer cut off at the token limit; its whole calls", self.name)
            update = {"parts": whole, "finish_reason": "tool_calls"}
            return await self._mended(request, cut.model_copy(update=update))
        if cut.tool_calls or not cut.text.strip():
            return None
        mended = await self._mended(request, cut)
        if mended.tool_calls:
            logger.info("%s: an answer cut off at the token limit; a call instead", self.name)
            return mended
        if mended.text != cut.text:
            return mended  # asked again, a whole answer came
        said = whole_sentences(cut.text)
        if not said:
            return None
        logger.info("%s: an answer cut off at the token limit; its whole sentences", self.name)
        return mended.model_copy(update={"parts": [TextPart(text=said)], "finish_reason": "stop"})

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
                item = await self._mended(request, item)
            yield item

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
