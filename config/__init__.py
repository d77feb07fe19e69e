import os

# One BLAS thread per process, unless the host says otherwise: the statistics' matrix
# products are small, and on a host whose cores the web and the worker share, extra BLAS
# threads spin waiting for busy cores (about 0.45 s of CPU per recompute at 100,000 ratings
# on two cores, benchmarks/README.md). Set before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .celery import app as celery_app

__all__ = ["celery_app"]
