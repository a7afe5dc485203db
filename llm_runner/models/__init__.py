"""pocket.llm.models: Llama-family model code, checkpoint loading and the export recipe.

Needs torch. The run side (pocket.llm.Runner) needs only the runtime.

    from pocket.llm.models import LlmConfig, Transformer, export_llm
    model = Transformer(LlmConfig.from_json("config.json"), max_seq_len=256)
    export_llm(model).save("model.pocket")
"""

from pocket.llm.models.checkpoint import load_checkpoint
from pocket.llm.models.config import LlmConfig
from pocket.llm.models.model import Transformer
from pocket.llm.models.recipe import export_llm

__all__ = ["LlmConfig", "Transformer", "load_checkpoint", "export_llm"]
