"""Model providers. ``AnthropicProvider`` loads the ``anthropic`` SDK only when used."""

from typing import TYPE_CHECKING, Any

from regista.providers.base import Provider, TextCallback
from regista.providers.scripted import ScriptedProvider

if TYPE_CHECKING:
    from regista.providers.anthropic import AnthropicProvider
    from regista.providers.replay import ReplayProvider

__all__ = ["AnthropicProvider", "Provider", "ReplayProvider", "ScriptedProvider", "TextCallback"]


def __getattr__(name: str) -> Any:
    # Lazy: importing the anthropic SDK costs about a second.
    if name == "AnthropicProvider":
        from regista.providers.anthropic import AnthropicProvider

        return AnthropicProvider
    if name == "ReplayProvider":
        from regista.providers.replay import ReplayProvider

        return ReplayProvider
    raise AttributeError(f"module 'regista.providers' has no attribute {name!r}")
