"""The one args convention of every component (pulumi-gcp's, e.g. `storage.Bucket`): an args class whose
fields accept `pulumi.Input` where a value only travels on to a resource, documented field by field, and
an `__init__(name, args=None, opts=None, **kwargs)` that takes either the args object or its fields as
keywords."""

from __future__ import annotations

from typing import Any, TypeVar

A = TypeVar("A")


def resolve_args(args_type: type[A], args: A | None, kwargs: dict[str, Any]) -> A:
    """`args` as given, or built from keyword arguments; never both."""
    if args is not None:
        if kwargs:
            raise TypeError(f"pass either a {args_type.__name__} or its fields as keywords, not both "
                            f"(got {', '.join(sorted(kwargs))})")
        if not isinstance(args, args_type):
            raise TypeError(f"expected {args_type.__name__}, got {type(args).__name__}")
        return args
    return args_type(**kwargs)
