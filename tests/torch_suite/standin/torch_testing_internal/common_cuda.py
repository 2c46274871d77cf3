"""torch.testing._internal.common_cuda on a machine without CUDA."""

import contextlib

TEST_CUDA = False
TEST_MULTIGPU = False
TEST_CUDNN = False
SM53OrLater = SM60OrLater = SM70OrLater = SM75OrLater = SM80OrLater = SM90OrLater = False
PLATFORM_SUPPORTS_FLASH_ATTENTION = False


def tf32_on_and_off(tf32_precision=1e-5):
    return lambda fn: fn


def with_tf32_off(fn):
    return fn


@contextlib.contextmanager
def tf32_off():
    yield
