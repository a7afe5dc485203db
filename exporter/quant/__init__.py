"""Quantization: weight formats, pocket:: quantized ops, and the transforms that use them."""
