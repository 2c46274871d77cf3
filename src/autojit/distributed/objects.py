"""Collectives of picklable Python objects, with torch.distributed's names:
broadcast_object_list, all_gather_object, gather_object and scatter_object_list (mpi4py's
pickling collectives; blocking, and graph breaks inside a compiled function)."""

from __future__ import annotations

from .process_group import group_rank_of, resolve, warn_not_in_group


def _group(group, what: str):
    found = resolve(group)
    if found is None:
        warn_not_in_group(what)
        return None
    from ..tensor.state import state

    if state.tracer is not None:
        from ..tensor.graph_break import graph_break

        graph_break(f"{what} inside a compiled function", needs_data=False)
    return found


def broadcast_object_list(object_list: list, src: int | None = None, group=None, device=None,
                          group_src: int | None = None) -> None:
    """Replace the entries of `object_list` by those of rank `src`'s list, in place."""
    found = _group(group, "broadcast_object_list")
    if found is None:
        return
    root = group_rank_of(found, src, group_src, "src")
    sent = found._channel.broadcast_object(list(object_list) if found.rank() == root else None,
                                           root)
    object_list[:] = sent


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Fill `object_list` (one entry per rank) with every process's `obj`, in rank order."""
    found = _group(group, "all_gather_object")
    if found is None:
        return
    if len(object_list) != found.size():
        raise ValueError(f"all_gather_object: object_list must have one entry per rank "
                         f"({found.size()}), got {len(object_list)}")
    object_list[:] = found._channel.all_gather_object(obj)


def gather_object(obj, object_gather_list: list | None = None, dst: int | None = None,
                  group=None, group_dst: int | None = None) -> None:
    """Fill `object_gather_list` of rank `dst` with every process's `obj`, in rank order."""
    found = _group(group, "gather_object")
    if found is None:
        return
    root = group_rank_of(found, dst, group_dst, "dst")
    gathered = found._channel.gather_object(obj, root)
    if found.rank() == root:
        if object_gather_list is None or len(object_gather_list) != found.size():
            raise ValueError("gather_object: the destination rank's object_gather_list must "
                             f"have one entry per rank ({found.size()})")
        object_gather_list[:] = gathered


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src: int | None = None, group=None,
                        group_src: int | None = None) -> None:
    """Rank `src`'s `scatter_object_input_list[r]` becomes rank r's
    `scatter_object_output_list[0]`."""
    found = _group(group, "scatter_object_list")
    if found is None:
        return
    root = group_rank_of(found, src, group_src, "src")
    objects = list(scatter_object_input_list) if found.rank() == root else None
    if objects is not None and len(objects) != found.size():
        raise ValueError("scatter_object_list: the source rank's list must have one entry per "
                         f"rank ({found.size()})")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    scatter_object_output_list[0] = found._channel.scatter_object(objects, root)
