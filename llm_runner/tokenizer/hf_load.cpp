// Reads a Hugging Face tokenizer.json into an HfTokenizer:
//   {"added_tokens": [{"id", "content", "single_word", "lstrip", "rstrip", "normalized",
//                      "special"}, ...],
//    "normalizer": ..., "pre_tokenizer": ..., "post_processor": ..., "decoder": ...,
//    "model": {"type": "BPE", "vocab": {token: id}, "merges": ["a b", ...] or [["a", "b"], ...],
//              "unk_token", "byte_fallback", "fuse_unk", "ignore_merges", ...}}
// The post-processor is not run (encode's add_bos does its job); its template only tells
// which token is bos.
#include <algorithm>

#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/json.h"

namespace pocket {
namespace detail {
namespace {

Error fail(Error e, const std::string& what, std::string* message) {
  *message = "tokenizer.json: " + what;
  return e;
}

// The model type, also for old files that leave "type" out.
std::string model_type(JsonRef model) {
  if (model.get("type").is_string()) return std::string(model.get("type").str());
  if (model.get("vocab").is_array()) return "Unigram";
  if (!model.get("merges").missing()) return "BPE";
  if (!model.get("max_input_chars_per_word").missing()) return "WordPiece";
  return "WordLevel";
}

// The first SpecialToken of a TemplateProcessing's "single" template, as an id.
int32_t template_bos(JsonRef post) {
  std::string_view type = post.get("type").str();
  if (type == "Sequence") {
    JsonRef list = post.get("processors");
    for (size_t i = 0; i < list.size(); ++i) {
      int32_t id = template_bos(list.at(i));
      if (id >= 0) return id;
    }
    return -1;
  }
  if (type != "TemplateProcessing") return -1;
  JsonRef first = post.get("single").at(0).get("SpecialToken");
  if (first.missing()) return -1;
  JsonRef ids = post.get("special_tokens").get(first.get("id").str()).get("ids");
  return ids.at(0).is_integer() ? static_cast<int32_t>(ids.at(0).integer()) : -1;
}

Error read_added_tokens(JsonRef list, std::vector<AddedToken>* out, std::string* message) {
  if (list.missing() || list.is_null()) return Error::Ok;
  if (!list.is_array()) return fail(Error::InvalidProgram, "\"added_tokens\" must be a list", message);
  for (size_t i = 0; i < list.size(); ++i) {
    JsonRef t = list.at(i);
    AddedToken a;
    if (!t.get("id").is_integer() || t.get("id").integer() < 0 || t.get("id").integer() >= (1 << 24) ||
        !t.get("content").is_string() || t.get("content").str().empty())
      return fail(Error::InvalidProgram,
                  "added_tokens[" + std::to_string(i) + "] needs an \"id\" (a token id) and a non-empty \"content\"",
                  message);
    a.id = static_cast<int32_t>(t.get("id").integer());
    a.content = std::string(t.get("content").str());
    a.special = t.get("special").boolean();
    a.single_word = t.get("single_word").boolean();
    a.lstrip = t.get("lstrip").boolean();
    a.rstrip = t.get("rstrip").boolean();
    a.normalized = t.get("normalized").missing() ? !a.special : t.get("normalized").boolean();
    out->push_back(std::move(a));
  }
  return Error::Ok;
}

Error read_pipeline(JsonRef root, HfTokenizer* tok, std::string* message) {
  std::string error;
  if (!tok->pre_tokenizer.parse(root.get("pre_tokenizer"), &error) ||
      !tok->normalizer.parse(root.get("normalizer"), &error) || !tok->decoder.parse(root.get("decoder"), &error))
    return fail(Error::Unsupported, error, message);
  if (!tok->model.parse(root.get("model"), tok->pre_tokenizer.byte_level(), &error))
    return fail(Error::InvalidProgram, error, message);
  return Error::Ok;
}

}  // namespace

Error load_hf_json(const char* data, size_t size, std::unique_ptr<TokenizerImpl>* out, std::string* message) {
  JsonDoc doc;
  std::string error;
  if (!doc.parse(data, size, &error)) return fail(Error::InvalidProgram, error, message);
  JsonRef root = doc.root();
  JsonRef model = root.get("model");
  if (!model.is_object())
    return fail(Error::InvalidProgram, "no \"model\" object: not a Hugging Face tokenizer.json", message);
  std::string type = model_type(model);
  if (type != "BPE") return fail(Error::Unsupported, "expected a BPE model, found " + type, message);

  std::unique_ptr<HfTokenizer> tok(new HfTokenizer());
  Error e = read_pipeline(root, tok.get(), message);
  if (e != Error::Ok) return e;
  std::vector<AddedToken> added;
  e = read_added_tokens(root.get("added_tokens"), &added, message);
  if (e != Error::Ok) return e;

  int32_t max_id = tok->model.max_id();
  for (const AddedToken& a : added) max_id = std::max(max_id, a.id);
  if (max_id < 0) return fail(Error::InvalidProgram, "the vocabulary is empty", message);
  size_t count = tok->model.entries().size() + added.size();
  if (static_cast<size_t>(max_id) >= 2 * count + 1024)  // holes cost memory: refuse a file of mostly holes
    return fail(Error::InvalidProgram,
                "token id " + std::to_string(max_id) + " is far beyond the " + std::to_string(count) + " tokens",
                message);
  Vocab& v = tok->vocab;
  v.resize(static_cast<size_t>(max_id) + 1);
  for (const auto& entry : tok->model.entries())
    v.set(entry.second, entry.first, tok->decoder.piece(entry.first), false);
  for (const AddedToken& a : added) {
    // A normalized token is matched, and decoded, in its normalized form ("▁<tool>" after a
    // Prepend("▁") normalizer), as Hugging Face does.
    std::string text = a.normalized ? tok->normalizer.apply(a.content) : a.content;
    v.set(a.id, text, tok->decoder.piece(text), a.special);
    v.ids[a.content] = v.ids[text] = a.id;  // added tokens win lookups
    (a.normalized ? tok->normalized_added : tok->raw_added).add(a, text);
  }
  tok->model.drop_entries();
  v.bos = template_bos(root.get("post_processor"));
  if (v.bos > max_id) v.bos = -1;
  v.guess_bos_eos();
  *out = std::move(tok);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
