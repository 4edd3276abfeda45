"""The unit suite's FFT tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_fft import *
