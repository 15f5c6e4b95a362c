"""The ``hf`` backend runs an image-text-to-text model (tiny, random weights, built offline).

The model is a LLaVA architecture from a config (CLIP vision tower, Llama text model, a few
thousand parameters) with a byte-level BPE tokenizer trained here on a handful of strings:
nothing is downloaded. Its replies are noise; what is tested is that the image reaches the
model (the processor expands the image token into patch embeddings) and that a text-only
model refuses images instead of dropping them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from psymetrics_plugin_hf.hf import HFBackend
from psymetrics_plugin_hf.hf_vision import is_image_text_model

from psymetrics_core.api import BackendError, GenerationSettings, ImagePart, Prompt

TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% for p in m['content'] %}{% if p['type'] == 'image' %}<image>{% else %}{{ p['text'] }}"
    "{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _tiny_llava(folder: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    specials = ["<unk>", "<pad>", "<image>", "<|im_start|>", "<|im_end|>"]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    corpus = ["Please look at this inkblot image carefully.", "user assistant system", "a bat"]
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=specials))
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        unk_token="<unk>",
        pad_token="<pad>",
        eos_token="<|im_end|>",
        extra_special_tokens={"image_token": "<image>"},
    )
    vision = transformers.CLIPVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        projection_dim=16,
    )
    text = transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    cfg = transformers.LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    transformers.set_seed(0)
    model = transformers.LlavaForConditionalGeneration(cfg)
    proc = transformers.LlavaProcessor(
        image_processor=transformers.CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tok,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=TEMPLATE,
    )
    model.save_pretrained(folder)
    proc.save_pretrained(folder)


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-llava")
    _tiny_llava(folder)
    return folder


def _png(colour: str) -> ImagePart:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 30), colour).save(buf, format="PNG")
    return ImagePart(buf.getvalue(), "image/png")


def test_image_text_model_generates_from_the_image(tiny_vlm: Path) -> None:
    assert is_image_text_model(tiny_vlm)
    be = HFBackend({"pretrained": str(tiny_vlm)})
    assert be.supports_images is True
    msgs = ({"role": "user", "content": "Please look at this inkblot image carefully."},)
    settings = GenerationSettings("generate", 6, 0.0, 1)
    black = be.generate([Prompt(msgs, (), "", images=(_png("black"),))], settings)
    white = be.generate([Prompt(msgs, (), "", images=(_png("white"),))], settings)
    assert isinstance(black[0].text, str) and isinstance(white[0].text, str)
    # the image changes what the model conditions on: its logits differ between images
    import torch

    proc, model = be._processor, be._model
    text = proc.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "x"}]}],
        add_generation_prompt=True,
        tokenize=False,
    )
    from PIL import Image

    outs = []
    for colour in ("black", "white"):
        enc = proc(text=[text], images=[Image.new("RGB", (40, 30), colour)], return_tensors="pt")
        assert int((enc["input_ids"] == model.config.image_token_index).sum()) == 16  # 4x4 patches
        with torch.inference_mode():
            outs.append(model(**enc).logits[0, -1])
    assert not torch.allclose(outs[0], outs[1])


def test_text_only_hf_model_refuses_images(tiny_vlm: Path, tmp_path: Path) -> None:
    import transformers

    cfg = transformers.AutoConfig.from_pretrained(tiny_vlm).text_config
    transformers.LlamaForCausalLM(cfg).save_pretrained(tmp_path / "text")
    transformers.AutoTokenizer.from_pretrained(tiny_vlm).save_pretrained(tmp_path / "text")
    be = HFBackend({"pretrained": str(tmp_path / "text")})
    assert be.supports_images is False
    msgs = ({"role": "user", "content": "hi"},)
    with pytest.raises(BackendError, match="text-only model: it cannot take images"):
        be.generate([Prompt(msgs, (), "", images=(_png("red"),))], GenerationSettings())


def test_rorschach_task_runs_on_the_image_text_model(tiny_vlm: Path, tmp_path: Path) -> None:
    """The projective plugin's Rorschach dialogue reaches the model through the processor."""
    pytest.importorskip("psymetrics_plugin_projective")
    import json

    from psymetrics_core import evaluate

    opts = {"interpreter_tokens": "4", "diagnostician_tokens": "4", "targets": "depression"}
    out = evaluate(
        ["rorschach"],
        model="hf",
        model_args={"pretrained": str(tiny_vlm)},
        limit=2,
        max_new_tokens=4,
        output=tmp_path / "run",
        task_options={"rorschach": opts},
        cache=False,
    )
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 4  # two cards x (free association with image, inquiry)
    assert [len(s["prompt"].get("images", [])) for s in samples] == [1, 0, 1, 0]
    entry = out["tasks"]["rorschach"]
    assert set(entry["judge_parse"]) == {"interpreter", "diagnostician.depression"}
