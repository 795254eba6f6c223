"""Word-level tokenizer of the embedded tiny models, and the one QA prompt layout they are trained on.

The tokenizer is written as a Hugging Face `tokenizer.json` (WordLevel model, Whitespace pre-tokenizer,
special tokens as added tokens) so that `@huggingface/tokenizers` in TypeScript loads it unchanged; this
module re-implements the same encoding in plain Python for training (Debian's python has no `tokenizers`).

Whitespace pre-tokenizer = regex `\\w+|[^\\w\\s]+`: spaces never matter, punctuation runs are one piece.
Special tokens are matched first, anywhere in the text (like HF added tokens).

QA prompt (see training/README.md; the harness must build exactly this):
    text = chat_template([{"role": "user", "content": user_content(passages, question)}], add_generation_prompt=True)
    user_content = "Passage 1 : <p1>\\nPassage 2 : <p2>\\n…\\nQuestion : <question>"   (no passages: "Question : <q>")
    tokens: <bos> <|user|> Passage 1 : … Question : … ? <|end|> <|assistant|>  → answer words, then <eos>
"""
from __future__ import annotations

import json
import re

PAD, BOS, EOS, UNK, MASK = "<pad>", "<bos>", "<eos>", "<unk>", "<mask>"
USER, ASSISTANT, END = "<|user|>", "<|assistant|>", "<|end|>"
SPECIALS = [PAD, BOS, EOS, UNK, MASK, USER, ASSISTANT, END]
# Words the prompt layout needs besides the world's words.
PROMPT_WORDS = ["Passage", "Question", ":"] + [str(i) for i in range(1, 21)]

# Jinja chat template (tokenizer_config.json). Whitespace in it is cosmetic for a word-level tokenizer.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}{{ '<|user|> ' + message['content'] + ' <|end|>' }}"
    "{% elif message['role'] == 'assistant' %}{{ '<|assistant|> ' + message['content'] + ' ' + eos_token }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)

_WORD = re.compile(r"\w+|[^\w\s]+")


class Tokenizer:
    def __init__(self, words: list[str]):
        vocab: dict[str, int] = {}
        for w in SPECIALS + PROMPT_WORDS + list(words):
            if w not in vocab:
                vocab[w] = len(vocab)
        self.vocab = vocab
        self.inv = {i: w for w, i in vocab.items()}
        self._special_re = re.compile("(" + "|".join(re.escape(s) for s in SPECIALS) + ")")
        for name, tok in (("pad", PAD), ("bos", BOS), ("eos", EOS), ("unk", UNK), ("mask", MASK),
                          ("user", USER), ("assistant", ASSISTANT), ("end", END)):
            setattr(self, f"{name}_id", vocab[tok])

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        ids = []
        for piece in self._special_re.split(text):
            if not piece:
                continue
            if piece in self.vocab and piece in SPECIALS:
                ids.append(self.vocab[piece])
                continue
            for w in _WORD.findall(piece):
                ids.append(self.vocab.get(w, self.unk_id))
        return ids

    def decode(self, ids, skip_special: bool = True) -> str:
        toks = [self.inv[int(i)] for i in ids]
        if skip_special:
            toks = [t for t in toks if t not in SPECIALS]
        return " ".join(toks)

    # -- files -----------------------------------------------------------------------------------
    def tokenizer_json(self) -> dict:
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [
                {"id": self.vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True} for s in SPECIALS],
            "normalizer": None,
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": None,
            "decoder": None,
            "model": {"type": "WordLevel", "vocab": self.vocab, "unk_token": UNK},
        }

    def tokenizer_config(self, model_max_length: int = 512) -> dict:
        return {
            "added_tokens_decoder": {
                str(self.vocab[s]): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                                     "single_word": False, "special": True} for s in SPECIALS},
            "additional_special_tokens": [USER, ASSISTANT, END],
            "bos_token": BOS, "eos_token": EOS, "pad_token": PAD, "unk_token": UNK, "mask_token": MASK,
            "add_bos_token": False, "add_eos_token": False,
            "chat_template": CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": False,
            "model_max_length": model_max_length,
            "tokenizer_class": "PreTrainedTokenizerFast",
        }

    # -- prompt layout ---------------------------------------------------------------------------
    def chat(self, user: str, answer: str | None = None) -> str:
        """The chat template rendered by hand (tests check it equals the Jinja template's output)."""
        s = f"{BOS}{USER} {user} {END}{ASSISTANT}"
        if answer is not None:
            s += f" {answer} {EOS}"
        return s


def user_content(passages: list[str], question: str) -> str:
    lines = [f"Passage {i + 1} : {p}" for i, p in enumerate(passages)]
    return "\n".join(lines + [f"Question : {question}"])


def save(tok: Tokenizer, out_dir: str) -> dict:
    """{file name: dict} for hf_formats.save_checkpoint(tokenizer_files=…)."""
    return {"tokenizer.json": tok.tokenizer_json(), "tokenizer_config.json": tok.tokenizer_config()}


def dumps(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
