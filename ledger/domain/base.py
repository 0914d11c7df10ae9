"""The base of every aggregate: events stamped by the ledger's one UTC clock."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from datetime import datetime
from typing import Any, ClassVar

from eventsourcing.domain import (
    Aggregate,
    CanMutateAggregate,
    CommandMethodDecorator,
    DecoratedFuncCaller,
    decorated_func_callers,
)

from ledger.core import clock
from ledger.core.digests import GENESIS, SEAL_SLOT, seal_new, sealed_digest

Upcast = Callable[[dict[str, Any]], None]

#: Called with an aggregate after each new event of it is applied, where set: the application
#: sets it around a command's decision (`ledger.store.snapshots.capturing`); the domain knows no more.
AFTER_NEW_EVENT: ContextVar[Callable[[Any], None] | None] = ContextVar("after_new_event",
                                                                        default=None)


class LedgerAggregate(Aggregate):
    """An eventsourcing aggregate whose events take their time from `ledger.core.clock` and form a
    hash chain: each new event records the digest of the one before it (`ledger.core.digests`)."""

    chain_head: str = GENESIS

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)  # the library makes the event classes of `@event`
        _direct_apply(cls)

    def trigger_event(self, event_class: Any, **kwargs: Any) -> None:
        """The library's, without its copy of `kwargs` (a fresh dict already): the next event of
        this aggregate made, applied, and kept to be saved. An aggregate with a class-wide
        `TOPIC` (none here) goes the library's way, which checks its event classes' topics."""
        if getattr(type(self), "TOPIC", None):
            super().trigger_event(event_class, **kwargs)
            return
        kwargs["originator_id"] = self.id
        kwargs["originator_version"] = self.version + 1
        if kwargs.get("timestamp") is None:
            kwargs["timestamp"] = event_class.create_timestamp()
        try:
            new_event = event_class(**kwargs)
        except TypeError as error:
            raise TypeError(f"Can't construct event {event_class}: {error}") from None
        new_event.mutate(self)
        self._pending_events.append(new_event)

    class Event(Aggregate.Event):
        # What sealing the event needs (`ledger.core.digests.SEAL_SLOT`), kept beside its
        # attributes rather than among them: never stored, compared, copied into a view.
        __slots__ = (SEAL_SLOT,)

        #: The version of the event's shape, set by `versioned` (the library reads 1 when unset).
        class_version: ClassVar[int]

        @staticmethod
        def create_timestamp() -> datetime:
            return clock.utcnow()

        def mutate(self, aggregate: Any) -> Any:
            new = "chain_prev" not in vars(self)
            if new:  # a new event: link it to its aggregate's chain, and seal it (once)
                head = aggregate.chain_head if aggregate is not None else GENESIS
                object.__setattr__(self, "chain_prev", head)
                digest = seal_new(self)
            result = super().mutate(aggregate)
            mutated = result if result is not None else aggregate
            mutated.chain_head = digest if new else sealed_digest(self)
            if new and (after := AFTER_NEW_EVENT.get()) is not None:
                after(mutated)
            return result

        def __getstate__(self) -> dict[str, Any]:
            """Its attributes alone: a copy is sealed again from them where it needs to be."""
            return self.__dict__

    class Created(Event, Aggregate.Created):
        pass


def _direct_apply(aggregate: type[LedgerAggregate]) -> None:
    """The event class the library's `@event` made for each command method of an aggregate (not
    its `__init__`, nor a property) given an `apply` that calls the decorated body with the
    event's fields it names, worked out once here. The library's looks the body up and filters
    the event's fields against its signature at every event applied, new or read from the
    store. The event classes, their names, topics and fields stay the library's: events
    recorded before read as they did."""
    for name, attribute in vars(aggregate).items():  # (the event classes change, not it)
        if (isinstance(attribute, CommandMethodDecorator) and name != "__init__"
                and attribute.decorated_property is None):
            event_class: Any = decorated_func_callers[attribute]
            event_class.apply = _applier(attribute.decorated_func, event_class)


def _applier(body: Callable[..., None], event_class: type) -> Callable[[Any, Any], None]:
    """An event's `apply`: `body` called with the event's fields it names, then the `apply`
    of the event class the library's was made from, if that class has one of its own."""
    names = [name for name in inspect.signature(body).parameters if name != "self"]
    inherited = super(DecoratedFuncCaller, event_class).apply  # type: ignore[misc]
    then = None if inherited is CanMutateAggregate.apply else inherited

    def apply(event: Any, aggregate: Any) -> None:
        fields = event.__dict__
        body(aggregate, **{name: fields[name] for name in names if name in fields})
        if then is not None:
            then(event, aggregate)

    return apply


def versioned(aggregate: type[LedgerAggregate], **versions: int) -> None:
    """Declare the version of each stored event class of an aggregate, by its name: 1 for a
    first shape, N once a shape changed, and then the class (or the one it extends) must have
    every upcaster `upcast_v1_v2` … `upcast_vN-1_vN` (docs/events.md). The library stores the
    version with every event above 1 and upcasts older ones when it reads them."""
    for name, version in versions.items():
        event_class = vars(aggregate).get(name)
        if not (isinstance(event_class, type) and issubclass(event_class, LedgerAggregate.Event)):
            raise TypeError(f"{aggregate.__name__} has no event class {name}")
        missing = [f"upcast_v{n}_v{n + 1}" for n in range(1, version)
                   if not hasattr(event_class, f"upcast_v{n}_v{n + 1}")]
        if version < 1 or missing:
            raise TypeError(f"{aggregate.__name__}.{name} version {version} lacks {missing}")
        event_class.class_version = version


def upcaster(event_class: type, from_version: int) -> Callable[[Upcast], Upcast]:
    """Attach a function as `upcast_vN_vN+1` of an event class made by `@event("Name")`, whose
    body cannot hold it (a class declared explicitly defines the static method itself)."""

    def attach(function: Upcast) -> Upcast:
        setattr(event_class, f"upcast_v{from_version}_v{from_version + 1}",
                staticmethod(function))
        return function

    return attach
