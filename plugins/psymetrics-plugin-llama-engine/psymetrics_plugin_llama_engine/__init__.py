"""A hand-built Llama forward pass for fast option scoring, used by ``psymetrics-plugin-hf``.

Two engines compute the function of transformers' ``LlamaForCausalLM`` (within float error):
``onnx_llama`` on ONNX Runtime (the default on a CPU; its layer graphs are built once with
``onnx`` and kept in ``<cache_dir>/onnx-graphs``) and ``native_llama`` in plain torch. This
distribution registers no hooks: the hf backend imports it when it is installed
(``--model-args native=auto|onnx|torch|false``) and scores with transformers when it is not.
"""

__version__ = "0.1.0"
