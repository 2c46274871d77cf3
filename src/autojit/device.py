"""Devices. The eager core runs on the CPU; the CUDA target adds 'cuda' devices."""

from __future__ import annotations


class device:  # noqa: N801 - torch's name
    """A device such as ``device(type='cpu')``; compared by type and index."""

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index  # noqa: A001
        if ":" in type:
            type, index_text = type.split(":", 1)  # noqa: A001
            index = int(index_text)
        if type not in ("cpu", "cuda"):
            raise RuntimeError("Expected one of cpu, cuda device type at start of device "
                               f"string: {type}")
        self.type = type
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


CPU = device("cpu")


def check_device(requested) -> device:
    """Validate a device= argument; only the CPU exists until the CUDA target lands."""
    if requested is None:
        return CPU
    resolved = device(requested) if not isinstance(requested, device) else requested
    if resolved.type != "cpu":
        raise RuntimeError(f"device '{resolved}' is not available: autojit was built for the CPU "
                           "only in this version")
    return resolved
