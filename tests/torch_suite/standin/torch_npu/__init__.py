"""The accelerator package the suite's copy of torch's tests imports, standing for no
accelerator: tests aimed at it run on the CPU or are skipped (common_device_type)."""

import types


class _NPU(types.SimpleNamespace):
    @staticmethod
    def get_device_name(index=0):
        return "cpu"

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0

    @staticmethod
    def is_bf16_supported():
        return False


npu = _NPU()
profiler = types.SimpleNamespace()
