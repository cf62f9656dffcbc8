"""Reading the photographs of the real-photo domain (stamps, bundled
photographs, wallpapers) with OpenCV, without libpng's warnings about
their embedded colour profiles."""
import cv2
import numpy as np

__all__ = ['read_image', 'without_colour_profile']


def without_colour_profile(data: bytes) -> bytes:
    """A PNG file's bytes without its ``iCCP`` chunk (the embedded colour
    profile, which OpenCV never applies); any other file as it is. Some
    stamps and bundled photographs carry a profile that libpng warns about
    on every read (``iCCP: known incorrect sRGB profile``)."""
    if not data.startswith(b'\x89PNG\r\n\x1a\n'):
        return data
    parts, at = [data[:8]], 8
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], 'big')
        end = at + 12 + length  # length, type, data, CRC
        if data[at + 4:at + 8] != b'iCCP':
            parts.append(data[at:end])
        at = end
    return b''.join(parts)


def read_image(path: str, flags: int = cv2.IMREAD_COLOR):
    """``cv2.imread(path, flags)`` without libpng's colour-profile
    warnings (:func:`without_colour_profile`); None when unreadable."""
    try:
        with open(path, 'rb') as f:
            data = without_colour_profile(f.read())
    except OSError:
        return None
    if not data:
        return None
    return cv2.imdecode(np.frombuffer(data, np.uint8), flags)
