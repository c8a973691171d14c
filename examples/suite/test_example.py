"""An example GPU test suite: run it on the example environments to see the header and real skip reasons.

pytest examples/suite -rs --gpu-env examples/snapshots/tf2.3-meets-cudnn8.json
"""

import pytest


def test_plain_cpu_logic_always_runs():
    assert sum(range(4)) == 6


@pytest.mark.requires_driver(">=535")
def test_needs_a_recent_driver():
    pass


@pytest.mark.requires_cuda(">=12")
def test_needs_cuda_12():
    pass


@pytest.mark.requires_gpu(memory="24GiB", compute_capability=">=8.0")
def test_big_model_on_ampere_or_newer(gpu):
    assert gpu.memory_total >= 24 * 1024**3


@pytest.mark.requires_cudnn(">=8.9")
def test_convolution_with_a_real_handle(cudnn_handle):
    assert cudnn_handle.value


@pytest.mark.requires_tensorflow("~=2.18")
def test_tensorflow_218_on_the_gpu():
    pass


@pytest.mark.requires_tensorflow("~=2.3.0")
class TestLegacyTensorFlow:
    @pytest.mark.requires_cudnn(">=7.6,<8")
    def test_tensorflow_23_with_its_cudnn(self):
        pass
