"""Fallback exporter for architectures the torch-free builder does not know (needs torch + transformers)."""
from __future__ import annotations

import io
from pathlib import Path

from .model_dir import EncoderError


def torch_export(model_dir: Path, layer: int):
    """``hidden_states[layer]`` of ``AutoModel`` (encoder part of encoder-decoders) as an onnx.ModelProto."""
    try:
        import onnx
        import torch
        from transformers import AutoModel
    except ImportError as e:
        raise EncoderError(f"exporting {model_dir} needs torch and transformers ({e}): "
                           "pip install torch transformers") from None
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager", local_files_only=True).eval()
    if hasattr(model, "encoder") and hasattr(model, "decoder"):
        model = model.encoder

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
            return out.hidden_states[layer]

    ids = torch.ones(2, 8, dtype=torch.long)
    mask = torch.ones(2, 8, dtype=torch.long)
    buf = io.BytesIO()
    with torch.no_grad():
        # torch annotates f as a path; its docs (and the exporter) accept a file-like object
        torch.onnx.export(Wrap(model), (ids, mask), buf,  # type: ignore[arg-type]
                          input_names=["input_ids", "attention_mask"],
                          output_names=["hidden_states"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                        "attention_mask": {0: "batch", 1: "seq"},
                                        "hidden_states": {0: "batch", 1: "seq"}},
                          opset_version=17, do_constant_folding=True, dynamo=False)
    return onnx.load_from_string(buf.getvalue())
