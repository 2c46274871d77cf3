"""autojit.distributed.device_mesh: DeviceMesh, the processes of the world laid out as an
n-dimensional array, each dimension with the process groups along it, and init_device_mesh,
torch.distributed.device_mesh's names. DTensor (distributed/tensor/) places its shards and
replicas on a mesh. It sits above the process groups (process_group.py), whose new_group makes
each dimension's groups.
"""

from __future__ import annotations

import numpy as np

from . import process_group as pg

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """The world ranks `mesh` (an n-dimensional array or tensor of them) on `device_type`
    devices, with optional `mesh_dim_names`. Every process of the world must make the same
    mesh, in the same order as its other groups: it makes the groups of each dimension (one
    for each line of processes along it) and keeps those this process belongs to."""

    def __init__(self, device_type: str, mesh, *, mesh_dim_names: tuple | None = None,
                 _init_backend: bool = True, _groups: list | None = None):
        ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if ranks.ndim == 0:
            ranks = ranks.reshape(1)
        if mesh_dim_names is not None and len(mesh_dim_names) != ranks.ndim:
            raise ValueError(f"mesh_dim_names {tuple(mesh_dim_names)} must have one name per "
                             f"mesh dimension ({ranks.ndim})")
        self.device_type = device_type
        self._ranks = ranks
        self.mesh_dim_names = None if mesh_dim_names is None else tuple(mesh_dim_names)
        if not pg.is_initialized():
            pg.init_process_group()
        here = np.argwhere(ranks == pg.get_rank())
        self._coordinate = None if len(here) == 0 else [int(i) for i in here[0]]
        self._groups = _groups if _groups is not None else [
            self._make_groups(dim) for dim in range(ranks.ndim)]

    def _make_groups(self, dim: int):
        """This process's group along `dim`, made with every other line's group, in the same
        order in every process (new_group's rule)."""
        lines = np.moveaxis(self._ranks, dim, -1).reshape(-1, self._ranks.shape[dim])
        mine = None
        for line in lines:
            ranks = [int(r) for r in line]
            if len(ranks) == pg.get_world_size() and sorted(ranks) == ranks:
                made = pg.default_group()  # (the whole world: its own group)
            else:
                made = pg.new_group(ranks)
            if pg.get_rank() in ranks:
                mine = made
        return mine

    @property
    def mesh(self):
        """The world ranks as an int64 tensor of the mesh's shape."""
        from ..tensor.creation import tensor

        return tensor(self._ranks.tolist())

    @property
    def shape(self) -> tuple:
        return tuple(self._ranks.shape)

    @property
    def ndim(self) -> int:
        return self._ranks.ndim

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of processes, along `mesh_dim` or in all."""
        return int(self._ranks.size if mesh_dim is None else self._ranks.shape[mesh_dim])

    def _dim(self, mesh_dim) -> int:
        if isinstance(mesh_dim, str):
            if self.mesh_dim_names is None or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                               f"dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return 0 if mesh_dim is None else int(mesh_dim)

    def get_group(self, mesh_dim=None):
        """The process group of this process along `mesh_dim` (by index or name; a 1-D mesh's
        only one when None)."""
        if mesh_dim is None and self.ndim != 1:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions"
                               + "Optional kwarg `mesh_dim` needs to be specified when "
                               "device_mesh.ndim > 1.")
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self) -> list:
        return list(self._groups)

    def get_rank(self) -> int:
        return pg.get_rank()

    def get_local_rank(self, mesh_dim=None) -> int:
        """This process's place along `mesh_dim`."""
        if mesh_dim is None and self.ndim != 1:
            raise RuntimeError("Optional kwarg `mesh_dim` needs to be specified when "
                               "device_mesh.ndim > 1.")
        return self._coordinate[self._dim(mesh_dim)]

    def get_coordinate(self) -> list | None:
        """This process's place along each dimension, or None when it is not in the mesh."""
        return None if self._coordinate is None else list(self._coordinate)

    def __getitem__(self, names) -> DeviceMesh:
        """The sub-mesh of the named dimensions through this process."""
        names = (names,) if isinstance(names, str) else tuple(names)
        dims = [self._dim(name) for name in names]
        index = tuple(slice(None) if dim in dims else self._coordinate[dim]
                      for dim in range(self.ndim))
        ranks = np.transpose(self._ranks[index], np.argsort(np.argsort(dims)))
        return DeviceMesh(self.device_type, ranks, mesh_dim_names=names,
                          _groups=[self._groups[dim] for dim in dims])

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceMesh) and other.shape == self.shape and bool(
            (other._ranks == self._ranks).all()) and other.mesh_dim_names == \
            self.mesh_dim_names

    def __hash__(self) -> int:
        return hash((self._ranks.tobytes(), self.shape, self.mesh_dim_names))

    def __repr__(self) -> str:
        names = "" if self.mesh_dim_names is None else \
            f", mesh_dim_names={self.mesh_dim_names}"
        return f"DeviceMesh('{self.device_type}', {self._ranks.tolist()}{names})"


def init_device_mesh(device_type: str, mesh_shape: tuple, *,
                     mesh_dim_names: tuple | None = None, backend_override=None) -> DeviceMesh:
    """A mesh of the whole world in row-major order, shaped `mesh_shape` (its product must be
    the world's size); the default process group is initialized first where it is not."""
    if mesh_dim_names is not None and len(set(mesh_dim_names)) != len(mesh_dim_names):
        raise RuntimeError("Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                           f"in mesh_dim_names {tuple(mesh_dim_names)}")
    if not pg.is_initialized():
        pg.init_process_group()
    size = int(np.prod(mesh_shape))
    if size != pg.get_world_size():
        raise RuntimeError(f"Mesh should not be bigger than default world size "
                           f"{pg.get_world_size()}, but found {size} ranks!")
    ranks = np.arange(size).reshape(tuple(mesh_shape))
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)
