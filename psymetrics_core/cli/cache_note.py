"""The line ``psym eval`` prints when a run's responses came from the response cache."""

from __future__ import annotations

from typing import Any

__all__ = ["cache_note"]


def cache_note(results: dict[str, Any]) -> str | None:
    """ "(from the cache) ..." with the counts of cached and fresh responses, or None when the
    run read nothing from the cache (or had none)."""
    cache = results.get("cache")
    if not isinstance(cache, dict) or not cache.get("hits"):
        return None
    hits, misses = int(cache["hits"]), int(cache.get("misses") or 0)
    fresh = "none" if misses == 0 else f"{misses:,}"
    return (
        f"(from the cache) {hits:,} of {hits + misses:,} responses came from the response "
        f"cache, {fresh} from the model; --no-cache asks the model again"
    )
