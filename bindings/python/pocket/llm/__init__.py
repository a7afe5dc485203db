"""pocket.llm: run chat models (Runner, Tokenizer); pocket.llm.models exports them (needs torch)."""
