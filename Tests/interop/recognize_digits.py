"""Prints the spoken digits pocketsphinx (offline, its bundled en-US acoustic model) hears in a
16 kHz mono 16-bit WAV file, e.g. "one two three four".

The search is a digits grammar, as an IVR collecting a number would use: the general language
model misreads formant-synthesized speech too often to check a synthesizer with.
Used by the Audio tests: python recognize_digits.py FILE.wav
"""
import sys
import wave

from pocketsphinx import Decoder

GRAMMAR = """#JSGF V1.0;
grammar digits;
public <digits> = <digit>+;
<digit> = zero | oh | one | two | three | four | five | six | seven | eight | nine;
"""


def main(path: str) -> None:
    with wave.open(path, "rb") as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit("need 16 kHz mono 16-bit WAV")
        pcm = w.readframes(w.getnframes())
    decoder = Decoder(samprate=16000)
    decoder.add_jsgf_string("digits", GRAMMAR)
    decoder.activate_search("digits")
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    hyp = decoder.hyp()
    print(hyp.hypstr if hyp else "")


if __name__ == "__main__":
    main(sys.argv[1])
