"""Copy a GGUF adding one BPE merge (and naming the gpt2 pre-tokenizer as llama.cpp knows it), so that
llama.cpp opens the random bench GGUFs.

bench/make_llada8b_q4.py writes a byte-level "gpt2" vocabulary with no merges (text tokenises to
bytes). gguf-py drops an empty array, so the file has no tokenizer.ggml.merges key at all, and
llama.cpp refuses it ("cannot find tokenizer merges in model file"). One merge of two spaces, "Ġ Ġ",
never applies to the benchmark's prompt (no double space), so both sides still tokenise it to bytes.
llama.cpp also refuses the pre-tokenizer name "gpt2" ("unknown pre-tokenizer type"); it is written as
"default", which both llama.cpp and floatscope read as the same byte-level GPT-2 split.
Tensors are copied as they are (streamed from the memory-mapped input).

   PYTHONPATH=.cache/oracle-py /usr/bin/python3 bench/gguf_add_merges.py in.gguf out.gguf"""
import sys
import gguf
from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

src, dst = sys.argv[1], sys.argv[2]
reader = gguf.GGUFReader(src, "r")
if gguf.Keys.Tokenizer.MERGES in reader.fields:
    sys.exit(f"{src}: already has {gguf.Keys.Tokenizer.MERGES}")
arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
writer = gguf.GGUFWriter(dst, arch=arch, endianess=reader.endianess)
merges = MetadataDetails(gguf.GGUFValueType.ARRAY, ["Ġ Ġ"], sub_type=gguf.GGUFValueType.STRING)
new = {gguf.Keys.Tokenizer.MERGES: merges}
pre = reader.fields.get(gguf.Keys.Tokenizer.PRE)
if pre is not None and pre.contents() == "gpt2":
    new[gguf.Keys.Tokenizer.PRE] = MetadataDetails(gguf.GGUFValueType.STRING, "default")
copy_with_new_metadata(reader, writer, new, [])
print("wrote", dst)
