#!/usr/bin/env python3
"""Writes the seed corpora under Tests/Fuzz/Corpus/<target>/: images from real encoders (Pillow's libjpeg, zlib,
libwebp; pillow-heif's libheif), multipart bodies as curl, browsers and React Native's FormData send them, the
Socket.IO frames a socket.io-client sends, and JSON bodies of Lantern's own API and events. Run once; the
output is committed (`python3 Tests/Fuzz/make-seeds.py`)."""
import io, json, os, shutil, uuid
from PIL import Image, ImageCms, ImageDraw
from PIL.PngImagePlugin import PngInfo
import pillow_heif

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "ImageSanitizerTests", "Fixtures")

def out(target, name, data):
    folder = os.path.join(HERE, "Corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)

def picture(mode="RGB", size=(32, 24)):
    im = Image.new("RGB", size, (200, 120, 40))
    d = ImageDraw.Draw(im)
    d.ellipse((4, 4, size[0] - 4, size[1] - 4), fill=(30, 90, 220))
    d.line((0, 0) + size, fill=(250, 250, 250), width=2)
    if mode == "RGBA":
        im = im.convert("RGBA"); im.putalpha(Image.linear_gradient("L").resize(size))
    elif mode != "RGB":
        im = im.convert(mode)
    return im

def exif():
    e = Image.Exif()
    e[0x010F] = "Lantern Phone"; e[0x0110] = "Model 1"; e[0x0132] = "2026:11:24 08:00:00"
    gps = e.get_ifd(0x8825); gps[1] = "N"; gps[2] = (50.0, 27.0, 0.0); gps[3] = "E"; gps[4] = (30.0, 31.0, 0.0)
    return e.tobytes()

XMP = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="50,27N"/></rdf:RDF></x:xmpmeta>'
ICC = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()

def encode(im, fmt, **kw):
    b = io.BytesIO(); im.save(b, fmt, **kw); return b.getvalue()

def images():
    for name in sorted(os.listdir(FIXTURES)):
        ext = name.rsplit(".", 1)[1]
        target = {"jpg": "jpeg", "png": "png", "webp": "webp", "heic": "heic"}[ext]
        shutil.copy(os.path.join(FIXTURES, name), os.path.join(HERE, "Corpus", target, "fixture-" + name))
    out("jpeg", "baseline-exif-gps-icc.jpg", encode(picture(), "JPEG", quality=80, exif=exif(), icc_profile=ICC))
    out("jpeg", "progressive.jpg", encode(picture(), "JPEG", progressive=True, quality=70))
    out("jpeg", "grey.jpg", encode(picture("L"), "JPEG"))
    out("jpeg", "cmyk-adobe.jpg", encode(picture("CMYK"), "JPEG"))
    out("jpeg", "subsampling-444-comment.jpg", encode(picture(), "JPEG", subsampling=0, comment=b"taken by Ada"))
    out("jpeg", "restart-intervals.jpg", encode(picture(size=(48, 40)), "JPEG", restart_marker_blocks=1))
    out("jpeg", "jfif-dpi-xmp.jpg", encode(picture(), "JPEG", dpi=(300, 300), xmp=XMP))
    info = PngInfo(); info.add_text("Author", "Ada"); info.add_itxt("Description", "Київ", lang="uk"); info.add_text("Comment", "z" * 40, zip=True)
    out("png", "rgb-text.png", encode(picture(), "PNG", pnginfo=info))
    out("png", "rgba-exif-icc.png", encode(picture("RGBA"), "PNG", exif=exif(), icc_profile=ICC))
    out("png", "palette-trns.png", encode(picture().convert("P", palette=Image.Palette.ADAPTIVE, colors=8), "PNG", transparency=0))
    out("png", "grey16-interlaced.png", encode(picture("L").convert("I;16"), "PNG", interlace=1))
    out("png", "gamma-chrm-srgb.png", encode(picture(), "PNG", gamma=0.45455))
    out("webp", "lossy.webp", encode(picture(), "WEBP", quality=60))
    out("webp", "lossless-alpha.webp", encode(picture("RGBA"), "WEBP", lossless=True))
    out("webp", "exif-xmp-icc.webp", encode(picture(), "WEBP", exif=exif(), xmp=XMP, icc_profile=ICC))
    frames = [picture(), picture().rotate(90, expand=False)]
    out("webp", "animated.webp", encode(frames[0], "WEBP", save_all=True, append_images=frames[1:], duration=100, loop=0))
    pillow_heif.register_heif_opener()
    out("heic", "exif-gps.heic", encode(picture(size=(64, 48)), "HEIF", exif=exif(), quality=50))
    out("heic", "xmp.heic", encode(picture(size=(64, 48)), "HEIF", xmp=XMP, quality=50))
    out("heic", "alpha-odd-size.heic", encode(picture("RGBA", size=(33, 17)), "HEIF", quality=40))

def multipart():
    photo = encode(picture(size=(16, 12)), "JPEG", quality=50)
    def body(boundary, parts, preamble=b"", epilogue=b""):
        b = preamble
        for headers, content in parts:
            b += b"--" + boundary + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + content + b"\r\n"
        return b + b"--" + boundary + b"--\r\n" + epilogue
    curl = b"------------------------d74496d66958873e"
    out("multipart", "curl-F.txt", b"multipart/form-data; boundary=" + curl + b"\n" + body(curl, [
        ([b'Content-Disposition: form-data; name="photo"; filename="moment.jpg"', b"Content-Type: image/jpeg"], photo)]))
    webkit = b"----WebKitFormBoundary7MA4YWxkTrZu0gW"
    out("multipart", "browser-two-fields.txt", b"multipart/form-data; boundary=" + webkit + b"\n" + body(webkit, [
        ([b'Content-Disposition: form-data; name="caption"'], "привіт 👋".encode()),
        ([b'Content-Disposition: form-data; name="file"; filename="IMG_0001.JPG"', b"Content-Type: image/jpeg"], photo)]))
    rn = str(uuid.UUID(int=0x3f2b8a1e4c5d4e6f8a9b0c1d2e3f4a5b)).encode()
    out("multipart", "react-native-formdata.txt", b'multipart/form-data; boundary="' + rn + b'"\n' + body(rn, [
        ([b'content-disposition: form-data; name="image"; filename="photo.heic"', b"content-type: image/heic", b"content-length: %d" % len(photo)], photo)],
        preamble=b"This is the preamble.\r\n", epilogue=b"epilogue\r\n"))
    out("multipart", "no-name-filename-only.txt", b"multipart/form-data; charset=utf-8; boundary=XyZ\n" + body(b"XyZ", [
        ([b'Content-Disposition: form-data; name="other"'], b"x"),
        ([b'Content-Disposition: form-data; filename="a.png"'], photo)]))

def socketio():
    token = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImtleS0xIn0.eyJzdWIiOiIwMTkzYTJiNC03YzNkLTc0NWUtOWYwMC0xMjM0NTY3ODlhYmMiLCJhcHAiOiJwYWlybHkifQ.c2lnbmF0dXJl"
    frames = ["2", "3", "2probe", "3probe", "1", "40", '40{"token":"%s"}' % token, '40/admin,{"token":"x"}', "40/chat",
              '42["get_state"]', '421["get_state"]', '4212["hello",{"a":1,"b":[true,null,2.5]}]', "41",
              '451-["upload",{"_placeholder":true,"num":0}]', '43[{"ok":true}]', '42/admin,7["x"]', "6", "5"]
    for i, frame in enumerate(frames):
        out("socketio", "frame-%02d.txt" % i, frame.encode())

def jsons():
    bodies = [
        {"deviceId": "3f2b8a1e-4c5d-4e6f-8a9b-0c1d2e3f4a5b", "app": "luckyday"},
        {"idToken": "eyJhbGciOiJSUzI1NiJ9.e30.sig", "app": "pairly", "nonce": "n-0S6_WzA2Mj"},
        {"birth": {"date": "1990-07-15", "time": "14:30", "placeId": 703448, "timeZone": "Europe/Kyiv"}, "houseSystem": "placidus"},
        {"date": "1990-07-15", "time": None, "latitude": 50.4501, "longitude": 30.5234, "timeZone": "Asia/Kolkata"},
        {"displayName": "👩‍💻 Ада", "locale": "uk-UA"},
        {"signedTransaction": "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlC"},
        {"id": "0193a2b4-7c3d-745e-9f00-123456789abc", "type": "identity.user.deleted", "version": 1,
         "occurredAt": "2026-11-24T08:00:00.123Z", "producer": "identity", "subject": "0193a2b4-7c3d-745e-9f00-123456789abc",
         "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "data": {"userId": "0193a2b4-7c3d-745e-9f00-123456789abc"}},
        {"type": "https://lantern.dev/problems/validation-failed", "title": "Invalid request", "status": 422, "code": "validation_failed",
         "errors": [{"field": "birth.date", "message": "must be a date"}]},
        [1, -0.0, 1.5e-7, 1e308, 12345678901234567890, "\u0000\ud83d\ude00", {"nested": [[[[]]]]}],
    ]
    for i, value in enumerate(bodies):
        out("json", "body-%02d.json" % i, json.dumps(value, ensure_ascii=(i % 2 == 0)).encode())
    out("json", "escapes.json", rb'{"a":"\u00e9\t\"\\\/","b":true,"c":null,"d":{}}')

if __name__ == "__main__":
    shutil.rmtree(os.path.join(HERE, "Corpus"), ignore_errors=True)
    for t in ("jpeg", "png", "webp", "heic"):
        os.makedirs(os.path.join(HERE, "Corpus", t), exist_ok=True)
    images(); multipart(); socketio(); jsons()
    for t in sorted(os.listdir(os.path.join(HERE, "Corpus"))):
        files = os.listdir(os.path.join(HERE, "Corpus", t))
        print(t, len(files), "seeds,", sum(os.path.getsize(os.path.join(HERE, "Corpus", t, f)) for f in files), "bytes")
