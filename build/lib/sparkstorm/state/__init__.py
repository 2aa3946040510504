"""Storm's ``KeyValueState`` and its providers: in the checkpoint (default) or in Redis."""

from sparkstorm.state.base import KeyValueState, StateError, StateProvider
from sparkstorm.state.memory import InMemoryKeyValueState, InMemoryStateProvider
from sparkstorm.state.providers import state_provider

__all__ = ["InMemoryKeyValueState", "InMemoryStateProvider", "KeyValueState", "StateError",
           "StateProvider", "state_provider"]
