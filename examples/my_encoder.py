# my_encoder.py: a complete encoder. Swap the two feature functions for your model.
import hashlib
import io

import numpy as np
from PIL import Image


class BagOfWordsAndColour:
    dim = 259  # vector size (required): 256 hashed word counts + the mean colour of the image
    sees_images = True  # False: the runner leaves images out of the inputs
    revision = "v1"  # bump whenever the vectors change: cached vectors belong to one name + revision

    def _vector(self, item):  # item: ModelInput(text, image (PNG/JPEG bytes or None), instruction)
        v = np.zeros(self.dim, dtype=np.float32)
        for word in f"{item.instruction or ''} {item.text}".lower().split():
            v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 256] += 1.0
        if item.image is not None:
            v[256:] = np.asarray(Image.open(io.BytesIO(item.image)).convert("RGB")).mean(axis=(0, 1)) / 255
        return v

    def encode_queries(self, batch):  # one row per input; the runner L2-normalizes and ranks by cosine
        return np.stack([self._vector(item) for item in batch])

    def encode_candidates(self, batch):
        return np.stack([self._vector(item) for item in batch])


def build():  # the factory named on the command line: --encoder my_encoder.py:build
    return BagOfWordsAndColour()
