"""Fourier transforms in the ops layer: autojit.fft, torch.fft's transforms as primitives on
SciPy's pocketfft (transforms.py, registered as `autojit.fft` by the package's top level), and
torch.stft and torch.istft written from them (spectral.py).

On the ops registry (ops/registry.py), like every op family.
"""
