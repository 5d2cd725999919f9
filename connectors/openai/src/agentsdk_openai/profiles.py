"""Engine profiles: where each OpenAI-compatible engine lives and what it can do, as data."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentsdk import ModelProfile

__all__ = ["ENGINE_PROFILES", "EngineProfile", "engine_profile"]


class EngineProfile(BaseModel):
    """How to reach one kind of OpenAI-compatible server and what its models can do.

    Behaviour differences between engines live here, never as ``if engine == ...``
    branches in the connector.
    """

    model_config = ConfigDict(frozen=True)

    scheme: str
    """The prefix of model strings for this engine (``vllm`` in ``vllm:Qwen/Qwen3-8B``)."""
    base_url: str | None
    """Default ``.../v1`` URL; None means the user must give one (``name@http://host/v1``)."""
    api_key_env: str | None = None
    """Environment variable holding the API key."""
    api_key_required: bool = False
    """True for hosted APIs: a missing key is an error before any request is sent."""
    model: ModelProfile = Field(default_factory=ModelProfile)
    """Capability flags handed to the agent loop."""
    stream_usage: bool = True
    """Send ``stream_options.include_usage`` when streaming."""
    json_schema_with_tools: bool = False
    """The server accepts ``response_format`` json_schema together with tools."""
    tool_parse_failure_marker: str | None = None
    """Text of the server error saying its tool-call parser rejected the model's output;
    the connector then asks again with the tools in the prompt and parses the text itself."""
    max_tokens_field: str = "max_tokens"
    """Name of the output-length field (OpenAI's newer models use ``max_completion_tokens``)."""


# llama.cpp's server answers HTTP 500 with this when a model's text fits no tool-call format.
_LLAMACPP_PARSE_FAILURE = "does not match the expected"


def _profile(**flags: object) -> ModelProfile:
    return ModelProfile.model_validate(flags)


ENGINE_PROFILES: dict[str, EngineProfile] = {
    profile.scheme: profile
    for profile in [
        EngineProfile(
            scheme="openai",
            base_url="https://api.openai.com/v1",
            api_key_env="OPENAI_API_KEY",
            api_key_required=True,
            model=_profile(
                context_window=128_000,
                image_input=True,
                images_in_tool_results=False,
                json_schema_output=True,
            ),
            json_schema_with_tools=True,
            max_tokens_field="max_completion_tokens",
        ),
        EngineProfile(
            scheme="vllm",
            base_url="http://127.0.0.1:8000/v1",
            api_key_env="VLLM_API_KEY",
            model=_profile(json_schema_output=True),
        ),
        EngineProfile(
            scheme="sglang",
            base_url="http://127.0.0.1:30000/v1",
            api_key_env="SGLANG_API_KEY",
            model=_profile(json_schema_output=True),
        ),
        EngineProfile(
            scheme="ollama",
            base_url="http://127.0.0.1:11434/v1",
            api_key_env="OLLAMA_API_KEY",
            model=_profile(json_schema_output=True, tool_choice_required=False),
        ),
        EngineProfile(
            scheme="llamacpp",
            base_url="http://127.0.0.1:8080/v1",
            api_key_env="LLAMACPP_API_KEY",
            tool_parse_failure_marker=_LLAMACPP_PARSE_FAILURE,
            model=_profile(json_schema_output=True),
        ),
        EngineProfile(
            scheme="dashscope",
            base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            api_key_env="DASHSCOPE_API_KEY",
            api_key_required=True,
            model=_profile(context_window=131_072, json_schema_output=False),
        ),
        EngineProfile(
            scheme="deepseek",
            base_url="https://api.deepseek.com/v1",
            api_key_env="DEEPSEEK_API_KEY",
            api_key_required=True,
            model=_profile(context_window=65_536, tool_choice_required=True),
        ),
        EngineProfile(
            scheme="local",
            base_url=None,  # the embedded engine picks a free loopback port
            tool_parse_failure_marker=_LLAMACPP_PARSE_FAILURE,
            model=_profile(
                context_window=8192,
                json_schema_output=True,
                parallel_tool_calls=False,
            ),
        ),
    ]
}


def engine_profile(scheme: str) -> EngineProfile:
    """The profile for a model-string scheme; raises ValueError listing the known ones."""
    try:
        return ENGINE_PROFILES[scheme]
    except KeyError:
        known = ", ".join(sorted(ENGINE_PROFILES))
        raise ValueError(f"unknown engine {scheme!r}; known engines: {known}") from None
