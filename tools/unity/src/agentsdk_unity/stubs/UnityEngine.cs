// Behavioural stand-ins for the few UnityEngine types the bridge handlers use. NOT Unity: an in-memory
// scene good enough to run the handlers under mono in tests. Member names follow Unity's documented API.
using System;
using System.Collections.Generic;
using System.IO;
using System.IO.Compression;
using System.Linq;
using UnityEngine.SceneManagement;

namespace UnityEngine
{
    public class Object
    {
        private static int _nextId = 1000;
        private readonly int _id = System.Threading.Interlocked.Increment(ref _nextId);
        public virtual string name { get; set; } = "";
        public int GetInstanceID() => _id;
        public static void DestroyImmediate(Object obj)
        {
            var go = obj as GameObject;
            if (go != null) go.Detach();
        }
        public override string ToString() => name;
    }

    public class ScriptableObject : Object
    {
        public static T CreateInstance<T>() where T : ScriptableObject, new() => new T();
    }

    public enum PrimitiveType { Sphere = 0, Capsule = 1, Cylinder = 2, Cube = 3, Plane = 4, Quad = 5 }

    public class GameObject : Object
    {
        private readonly List<Component> _components = new List<Component>();
        public Transform transform { get; }
        public bool activeSelf { get; set; } = true;
        public Scene scene => SceneManager.GetActiveScene();

        public GameObject(string name)
        {
            this.name = name;
            transform = (Transform)AddComponent(typeof(Transform));
            StubScene.Roots.Add(this);
        }

        public static GameObject CreatePrimitive(PrimitiveType type)
        {
            var go = new GameObject(type.ToString());
            // Like Unity: a primitive's MeshFilter holds the built-in mesh named after the primitive.
            ((MeshFilter)go.AddComponent(typeof(MeshFilter))).sharedMesh = new Mesh { name = type.ToString() };
            go.AddComponent(typeof(MeshRenderer));
            return go;
        }

        public Component AddComponent(Type type)
        {
            if (type == typeof(Transform) && _components.Count > 0) return null;
            var component = (Component)Activator.CreateInstance(type);
            component.Bind(this);
            _components.Add(component);
            return component;
        }

        public T GetComponent<T>() where T : Component => _components.OfType<T>().FirstOrDefault();
        public T[] GetComponents<T>() where T : Component => _components.OfType<T>().ToArray();

        internal void Detach()
        {
            if (transform.parent != null) transform.parent.RemoveChild(transform);
            StubScene.Roots.Remove(this);
        }
    }

    public class Component : Object
    {
        public GameObject gameObject { get; private set; }
        public Transform transform => gameObject.transform;
        public override string name { get => gameObject.name; set => gameObject.name = value; }
        internal void Bind(GameObject owner) { gameObject = owner; }
    }

    public class Behaviour : Component { public bool enabled = true; }
    public class MonoBehaviour : Behaviour { }
    public class Mesh : Object { }
    public class MeshFilter : Component { public Mesh sharedMesh { get; set; } }
    public class MeshRenderer : Component { }
    public class Light : Behaviour { }

    public class Transform : Component
    {
        private readonly List<Transform> _children = new List<Transform>();
        public Vector3 localPosition { get; set; }
        public Vector3 localEulerAngles { get; set; }
        public Vector3 localScale { get; set; } = new Vector3(1, 1, 1);
        public Transform parent { get; private set; }
        public int childCount => _children.Count;
        public Transform GetChild(int index) => _children[index];

        public void SetParent(Transform newParent, bool worldPositionStays)
        {
            if (parent != null) parent._children.Remove(this); else StubScene.Roots.Remove(gameObject);
            parent = newParent;
            if (parent != null) parent._children.Add(this); else StubScene.Roots.Add(gameObject);
        }

        internal void RemoveChild(Transform child) => _children.Remove(child);

        public void Rotate(float xAngle, float yAngle, float zAngle)
        {
            Vector3 e = localEulerAngles;
            localEulerAngles = new Vector3(e.x + xAngle, e.y + yAngle, e.z + zAngle);
        }
    }

    public struct Vector3
    {
        public float x, y, z;
        public Vector3(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }
    }

    public struct Vector2
    {
        public float x, y;
        public Vector2(float x, float y) { this.x = x; this.y = y; }
    }

    public struct Color
    {
        public float r, g, b, a;
        public Color(float r, float g, float b, float a) { this.r = r; this.g = g; this.b = b; this.a = a; }
    }

    public struct Rect
    {
        public float x, y, width, height;
        public Rect(float x, float y, float width, float height) { this.x = x; this.y = y; this.width = width; this.height = height; }
    }

    public enum TextureFormat { RGB24 = 3, RGBA32 = 4 }

    public class RenderTexture : Object
    {
        public static RenderTexture active { get; set; }
        public readonly int width, height;
        internal byte[] Pixels;
        public RenderTexture(int width, int height, int depth) { this.width = width; this.height = height; Pixels = new byte[width * height * 3]; }
    }

    public class Texture2D : Object
    {
        public readonly int width, height;
        internal byte[] Pixels;
        public Texture2D(int width, int height, TextureFormat format, bool mipChain) { this.width = width; this.height = height; Pixels = new byte[width * height * 3]; }

        public void ReadPixels(Rect source, int destX, int destY)
        {
            if (RenderTexture.active == null) throw new InvalidOperationException("ReadPixels without an active RenderTexture");
            Buffer.BlockCopy(RenderTexture.active.Pixels, 0, Pixels, 0, Math.Min(Pixels.Length, RenderTexture.active.Pixels.Length));
        }

        public void Apply() { }
    }

    public static class ImageConversion
    {
        /// <summary>A real PNG (RGB, 8 bit, stored zlib) of the texture's pixels.</summary>
        public static byte[] EncodeToPNG(this Texture2D tex) => StubPng.Encode(tex.width, tex.height, tex.Pixels);
    }

    public class Camera : Behaviour
    {
        public RenderTexture targetTexture { get; set; }
        public Color backgroundColor = new Color(0.19f, 0.3f, 0.47f, 1f);
        public static Camera main => StubScene.All().Select(g => g.GetComponent<Camera>()).FirstOrDefault(c => c != null && c.gameObject.name == "Main Camera");
        public static Camera[] allCameras => StubScene.All().Select(g => g.GetComponent<Camera>()).Where(c => c != null).ToArray();

        /// <summary>Paints the background and one light square per renderer (so a screenshot shows the scene changed).</summary>
        public void Render()
        {
            RenderTexture target = targetTexture;
            if (target == null) return;
            int w = target.width, h = target.height;
            var renderers = StubScene.All().Where(g => g.GetComponent<MeshRenderer>() != null).ToList();
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                {
                    int i = (y * w + x) * 3;
                    target.Pixels[i] = (byte)(backgroundColor.r * 255);
                    target.Pixels[i + 1] = (byte)(backgroundColor.g * 255);
                    target.Pixels[i + 2] = (byte)(backgroundColor.b * 255);
                }
            for (int n = 0; n < renderers.Count; n++)
            {
                int size = Math.Max(2, w / 6), left = (n * size * 3 / 2 + size / 2) % Math.Max(1, w - size), top = h / 2 - size / 2;
                for (int y = top; y < top + size && y < h; y++)
                    for (int x = left; x < left + size && x < w; x++)
                    {
                        int i = (y * w + x) * 3;
                        target.Pixels[i] = 230; target.Pixels[i + 1] = 200; target.Pixels[i + 2] = 60;
                    }
            }
        }
    }

    public static class Time
    {
        public static float deltaTime => 1f / 60f;
    }

    public enum LogType { Error = 0, Assert = 1, Warning = 2, Log = 3, Exception = 4 }

    public static class Application
    {
        public delegate void LogCallback(string condition, string stackTrace, LogType type);
        public static event LogCallback logMessageReceivedThreaded;
        public static string dataPath { get; set; } = Path.Combine(Directory.GetCurrentDirectory(), "Assets");
        public static string unityVersion => "stub";
        internal static void Emit(string message, LogType type) => logMessageReceivedThreaded?.Invoke(message, "", type);
    }

    public static class Debug
    {
        public static void Log(object message) => Application.Emit(Convert.ToString(message), LogType.Log);
        public static void LogWarning(object message) => Application.Emit(Convert.ToString(message), LogType.Warning);
        public static void LogError(object message) => Application.Emit(Convert.ToString(message), LogType.Error);
    }

    /// <summary>The single in-memory scene of the stub editor.</summary>
    public static class StubScene
    {
        public static readonly List<GameObject> Roots = new List<GameObject>();
        public static string Name = "Untitled";
        public static string Path = "";
        public static bool Dirty;

        public static IEnumerable<GameObject> All()
        {
            var stack = new Stack<Transform>(Roots.Select(r => r.transform).Reverse());
            while (stack.Count > 0)
            {
                Transform t = stack.Pop();
                yield return t.gameObject;
                for (int i = t.childCount - 1; i >= 0; i--) stack.Push(t.GetChild(i));
            }
        }
    }

    internal static class StubPng
    {
        public static byte[] Encode(int width, int height, byte[] rgb)
        {
            var raw = new MemoryStream();
            for (int y = 0; y < height; y++)
            {
                raw.WriteByte(0); // filter: none
                raw.Write(rgb, y * width * 3, width * 3);
            }
            byte[] scanlines = raw.ToArray();
            var z = new MemoryStream();
            z.WriteByte(0x78); z.WriteByte(0x01);
            using (var deflate = new DeflateStream(z, CompressionMode.Compress, true)) deflate.Write(scanlines, 0, scanlines.Length);
            uint a = 1, b = 0;
            foreach (byte v in scanlines) { a = (a + v) % 65521; b = (b + a) % 65521; }
            WriteBig(z, (b << 16) | a);
            var png = new MemoryStream();
            png.Write(new byte[] { 137, 80, 78, 71, 13, 10, 26, 10 }, 0, 8);
            var header = new MemoryStream();
            WriteBig(header, (uint)width); WriteBig(header, (uint)height);
            header.Write(new byte[] { 8, 2, 0, 0, 0 }, 0, 5);
            Chunk(png, "IHDR", header.ToArray());
            Chunk(png, "IDAT", z.ToArray());
            Chunk(png, "IEND", new byte[0]);
            return png.ToArray();
        }

        private static void Chunk(Stream s, string type, byte[] data)
        {
            WriteBig(s, (uint)data.Length);
            byte[] typeBytes = System.Text.Encoding.ASCII.GetBytes(type);
            s.Write(typeBytes, 0, 4);
            s.Write(data, 0, data.Length);
            WriteBig(s, Crc(typeBytes.Concat(data).ToArray()));
        }

        private static uint Crc(byte[] data)
        {
            uint c = 0xffffffff;
            foreach (byte v in data)
            {
                c ^= v;
                for (int k = 0; k < 8; k++) c = (c & 1) != 0 ? 0xedb88320 ^ (c >> 1) : c >> 1;
            }
            return c ^ 0xffffffff;
        }

        private static void WriteBig(Stream s, uint v)
        {
            s.WriteByte((byte)(v >> 24)); s.WriteByte((byte)(v >> 16)); s.WriteByte((byte)(v >> 8)); s.WriteByte((byte)v);
        }
    }
}

namespace UnityEngine.SceneManagement
{
    public struct Scene
    {
        public string name => StubScene.Name;
        public string path => StubScene.Path;
        public bool isDirty => StubScene.Dirty;
        public bool isLoaded => true;
        public GameObject[] GetRootGameObjects() => StubScene.Roots.ToArray();
    }

    public static class SceneManager
    {
        public static int sceneCount => 1;
        public static Scene GetSceneAt(int index) => new Scene();
        public static Scene GetActiveScene() => new Scene();
    }
}
