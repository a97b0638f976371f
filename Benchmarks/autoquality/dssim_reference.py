# A second computation of DSSIM, in float64 NumPy, written from the algorithm's description (dssim's README
# and documentation; not its code), independently of Sources/CPixels/dssim.c. It reproduces the values
# dssim's own tests lock (0.000948392 for its two test pictures) to within 2e-6; DSSIMTests checks the C
# code against its synthetic values, and run.py against it on real pictures. Usage:
#   python3 dssim_reference.py a.png b.png     # 8-bit RGB/RGBA PNGs of equal size (Pillow reads them when present)
#   python3 dssim_reference.py --synth         # the synthetic 64x64 values of DSSIMTests
import zlib, struct, sys
import numpy as np

def read_png(path):
    try:
        from PIL import Image
        return np.asarray(Image.open(path).convert('RGBA'))
    except ImportError:
        pass
    data = open(path,'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    pos = 8; idat = b''; w=h=ct=bd=None
    while pos < len(data):
        ln, = struct.unpack('>I', data[pos:pos+4]); typ = data[pos+4:pos+8]; body = data[pos+8:pos+8+ln]; pos += 12+ln
        if typ == b'IHDR': w,h,bd,ct,_,_,il = struct.unpack('>IIBBBBB', body); assert bd==8 and il==0
        elif typ == b'IDAT': idat += body
    ch = {2:3, 6:4, 0:1, 4:2}[ct]
    raw = zlib.decompress(idat); stride = w*ch
    out = np.zeros((h, stride), np.uint8); prev = np.zeros(stride, np.int32)
    i = 0
    for y in range(h):
        f = raw[i]; line = np.frombuffer(raw[i+1:i+1+stride], np.uint8).astype(np.int32); i += 1+stride
        cur = np.zeros(stride, np.int32)
        for x in range(stride):
            a = cur[x-ch] if x>=ch else 0; b = prev[x]; c = prev[x-ch] if x>=ch else 0
            if f==0: p=0
            elif f==1: p=a
            elif f==2: p=b
            elif f==3: p=(a+b)//2
            else:
                pa=abs(b-c); pb=abs(a-c); pc=abs(a+b-2*c)
                p = a if (pa<=pb and pa<=pc) else (b if pb<=pc else c)
            cur[x] = (line[x]+p) & 255
        out[y] = cur; prev = cur
    img = out.reshape(h, w, ch)
    if ch == 3: img = np.concatenate([img, np.full((h,w,1),255,np.uint8)], axis=2)
    return img

def srgb_to_linear(v):
    v = v/255.0
    return np.where(v <= 0.04045, v/12.92, ((v+0.055)/1.055)**2.4)

def to_rgbaplu(img8):
    a = img8[...,3]/255.0
    rgb = srgb_to_linear(img8[...,:3].astype(np.float64)) * a[...,None]
    return np.concatenate([rgb, a[...,None]], axis=2)

def to_lab(p):  # p: HxWx4 premultiplied linear
    h, w, _ = p.shape
    y, x = np.mgrid[0:h, 0:w]
    n = (x+11) ^ (y+11)
    bg = 1.0 - p[...,3]
    r = p[...,0] + np.where(n & 16, bg, 0); g = p[...,1] + np.where(n & 8, bg, 0); b = p[...,2] + np.where(n & 32, bg, 0)
    fx = (0.4124*r + 0.3576*g + 0.1805*b)/0.9505
    fy = (0.2126*r + 0.7152*g + 0.0722*b)/1.0
    fz = (0.0193*r + 0.1192*g + 0.9505*b)/1.089
    eps = 216/24389; K = 24389/(27*116)
    f = lambda t: np.where(t > eps, np.cbrt(np.maximum(t,0)) - 16/116, K*t)
    X, Y, Z = f(fx), f(fy), f(fz)
    L = Y*1.05
    A = (500/220)*(X-Y) + 86.2/220
    B = (200/220)*(Y-Z) + 107.9/220
    return [L, A, B]

def blur3(img):
    # one 3x3 pass = separable [s,c,s] horizontally and vertically, edge clamped
    s, c = 0.30875886, 0.3824828
    def h(a):
        l = np.concatenate([a[:, :1], a[:, :-1]], axis=1); r = np.concatenate([a[:, 1:], a[:, -1:]], axis=1)
        return s*l + c*a + s*r
    def v(a): return h(a.T).T
    return v(h(img))
def blur(img): return blur3(blur3(img))

def downsample(p):
    h, w = p.shape[:2]
    if w < 8 or h < 8: return None
    hh, hw = h//2, w//2
    q = p[:hh*2, :hw*2]
    return (q[0::2,0::2] + q[0::2,1::2] + q[1::2,0::2] + q[1::2,1::2]) * 0.25

def prep(p, nscales=5):
    scales = []
    while p is not None and len(scales) < nscales:
        chans = []
        for i, ch in enumerate(to_lab(p)):
            if i > 0: ch = blur(ch)
            chans.append((ch, blur(ch), blur(ch*ch)))
        scales.append(chans)
        p = downsample(p)
    return scales

W = [0.028, 0.197, 0.322, 0.298, 0.155]
def compare(s1, s2):
    C1, C2 = 0.01**2, 0.03**2
    tot = 0; wsum = 0
    for n, (a, b) in enumerate(zip(s1, s2)):
        mu1sq = sum(x[1]*x[1] for x in a)/3; mu2sq = sum(x[1]*x[1] for x in b)/3
        mu12 = sum(x[1]*y[1] for x, y in zip(a, b))/3
        s1sq = sum(x[2]-x[1]*x[1] for x in a)/3; s2sq = sum(x[2]-x[1]*x[1] for x in b)/3
        s12 = sum(blur(x[0]*y[0]) - x[1]*y[1] for x, y in zip(a, b))/3
        m = (2*mu12 + C1)*(2*s12 + C2)/((mu1sq + mu2sq + C1)*(s1sq + s2sq + C2))
        avg = max(m.mean(), 0.0) ** (0.5**n)
        score = 1 - np.abs(avg - m).mean()
        tot += score*W[n]; wsum += W[n]
    ssim = tot/wsum
    return 1/max(ssim, np.finfo(float).eps) - 1

def synth_base(w=64, h=64):
    y, x = np.mgrid[0:h, 0:w]
    img = np.zeros((h, w, 4), np.int64)
    img[...,0] = (x*4) & 255; img[...,1] = (y*4) & 255; img[...,2] = ((x+y)*2) & 255; img[...,3] = 255
    return img

def dssim_u8(a, b):
    return compare(prep(to_rgbaplu(a.astype(np.uint8))), prep(to_rgbaplu(b.astype(np.uint8))))

if __name__ == '__main__':
    if sys.argv[1] == '--synth':
        A = synth_base()
        B1 = A.copy(); B1[...,:3] = np.minimum(255, A[...,:3] + 10)
        B2 = A.copy(); B2[...,:3] = A[...,:3] & ~15
        B3 = A.copy(); B3[...,3] = 128
        B4 = A.copy(); B4[...,3] = 0
        print('brightness +10 :', dssim_u8(A, B1))
        print('quantize &~15  :', dssim_u8(A, B2))
        print('alpha 255->128 :', dssim_u8(A, B3))
        print('alpha 255->0   :', dssim_u8(A, B4))
        print('identity       :', dssim_u8(A, A))
        sys.exit(0)
    a = to_rgbaplu(read_png(sys.argv[1])); b = to_rgbaplu(read_png(sys.argv[2]))
    print('full', compare(prep(a), prep(b)))
    print('identity', compare(prep(a), prep(a)))
    if a.shape[:2] == (200, 320):  # dssim's tests/test1-sm.png vs tests/test2-sm.png
        print('sub 2,3 vs 17,9 44x33', compare(prep(a[3:36, 2:46]), prep(b[9:42, 17:61])))
        print('sub 22,8 61x40', compare(prep(a[8:48, 22:83]), prep(b[8:48, 22:83])))
