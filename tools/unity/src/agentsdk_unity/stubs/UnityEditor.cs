// Behavioural stand-ins for the UnityEditor types the bridge handlers use. NOT Unity: script "compilation"
// really runs mcs against the stub UnityEngine.dll and loads the result, so added components exist.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using UnityEditor.Compilation;
using UnityEngine;
using UnityEngine.SceneManagement;
using Object = UnityEngine.Object;

namespace UnityEditor
{
    [AttributeUsage(AttributeTargets.Class)]
    public sealed class InitializeOnLoadAttribute : Attribute { }

    public enum PlayModeStateChange { EnteredEditMode, ExitingEditMode, EnteredPlayMode, ExitingPlayMode }

    public static class EditorApplication
    {
        public delegate void CallbackFunction();
        public static CallbackFunction update;
        public static event Action<PlayModeStateChange> playModeStateChanged;
        public static event Action quitting;
        public static bool isPlaying { get; set; }
        public static bool isPaused { get; set; }
        public static bool isPlayingOrWillChangePlaymode => isPlaying;
        public static bool isCompiling => StubEditor.Compiling;

        public static void EnterPlaymode()
        {
            isPlaying = true;
            playModeStateChanged?.Invoke(PlayModeStateChange.EnteredPlayMode);
        }

        public static void ExitPlaymode()
        {
            isPlaying = false;
            playModeStateChanged?.Invoke(PlayModeStateChange.EnteredEditMode);
        }

        internal static void RaiseQuitting() => quitting?.Invoke();
    }

    public static class AssemblyReloadEvents
    {
        public delegate void AssemblyReloadCallback();
        public static event AssemblyReloadCallback beforeAssemblyReload;
        internal static void RaiseBefore() => beforeAssemblyReload?.Invoke();
    }

    public static class AssetDatabase
    {
        public static void Refresh() { }

        public static void ImportAsset(string path)
        {
            if (path.EndsWith(".cs", StringComparison.Ordinal)) StubEditor.CompileScripts();
        }

        public static T LoadAssetAtPath<T>(string path) where T : Object
        {
            return File.Exists(Path.Combine(StubEditor.ProjectRoot, path)) ? (T)(object)new GameObject(Path.GetFileNameWithoutExtension(path)) : null;
        }
    }

    public static class Undo
    {
        public static void RegisterCreatedObjectUndo(Object created, string name) { }
        public static void RecordObject(Object target, string name) { }
        public static Component AddComponent(GameObject target, Type type) => target.AddComponent(type);
        public static void DestroyObjectImmediate(Object target) => Object.DestroyImmediate(target);
    }

    public static class PrefabUtility
    {
        /// <summary>Writes a small text description of the hierarchy (real Unity writes YAML).</summary>
        public static GameObject SaveAsPrefabAsset(GameObject root, string assetPath, out bool success)
        {
            string full = Path.Combine(StubEditor.ProjectRoot, assetPath);
            Directory.CreateDirectory(Path.GetDirectoryName(full));
            var lines = new List<string> { "stub prefab of " + root.name };
            foreach (Component c in root.GetComponents<Component>())
            {
                lines.Add("component " + c.GetType().Name);
                foreach (FieldInfo f in c.GetType().GetFields(BindingFlags.Public | BindingFlags.Instance))
                    lines.Add("  " + f.Name + " = " + f.GetValue(c));
            }
            File.WriteAllLines(full, lines);
            success = true;
            return root;
        }
    }

    public enum SerializedPropertyType
    {
        Generic = -1, Integer = 0, Boolean = 1, Float = 2, String = 3, Color = 4, ObjectReference = 5,
        LayerMask = 6, Enum = 7, Vector2 = 8, Vector3 = 9, Vector4 = 10, Rect = 11,
    }

    public class SerializedObject
    {
        private readonly Object _target;
        public SerializedObject(Object target) { _target = target; }

        public SerializedProperty FindProperty(string propertyPath)
        {
            FieldInfo field = _target.GetType().GetField(propertyPath, BindingFlags.Public | BindingFlags.Instance);
            return field == null ? null : new SerializedProperty(_target, field);
        }

        public bool ApplyModifiedProperties() => true;
    }

    /// <summary>Reads and writes a public field by reflection (Unity goes through its serialized data).</summary>
    public class SerializedProperty
    {
        private readonly object _owner;
        private readonly FieldInfo _field;

        internal SerializedProperty(object owner, FieldInfo field) { _owner = owner; _field = field; }

        public string name => _field.Name;

        public SerializedPropertyType propertyType
        {
            get
            {
                Type t = _field.FieldType;
                if (t == typeof(int) || t == typeof(long)) return SerializedPropertyType.Integer;
                if (t == typeof(float) || t == typeof(double)) return SerializedPropertyType.Float;
                if (t == typeof(bool)) return SerializedPropertyType.Boolean;
                if (t == typeof(string)) return SerializedPropertyType.String;
                if (t == typeof(Vector3)) return SerializedPropertyType.Vector3;
                if (t == typeof(Vector2)) return SerializedPropertyType.Vector2;
                if (t == typeof(Color)) return SerializedPropertyType.Color;
                if (t.IsEnum) return SerializedPropertyType.Enum;
                if (typeof(Object).IsAssignableFrom(t)) return SerializedPropertyType.ObjectReference;
                return SerializedPropertyType.Generic;
            }
        }

        private object Value { get => _field.GetValue(_owner); set => _field.SetValue(_owner, value); }

        public long longValue { get => Convert.ToInt64(Value); set => Value = Convert.ChangeType(value, _field.FieldType); }
        public int intValue { get => Convert.ToInt32(Value); set => Value = Convert.ChangeType(value, _field.FieldType); }
        public double doubleValue { get => Convert.ToDouble(Value); set => Value = Convert.ChangeType(value, _field.FieldType); }
        public float floatValue { get => Convert.ToSingle(Value); set => Value = Convert.ChangeType(value, _field.FieldType); }
        public bool boolValue { get => (bool)Value; set => Value = value; }
        public string stringValue { get => (string)Value; set => Value = value; }
        public Vector3 vector3Value { get => (Vector3)Value; set => Value = value; }
        public Vector2 vector2Value { get => (Vector2)Value; set => Value = value; }
        public Color colorValue { get => (Color)Value; set => Value = value; }
        public Object objectReferenceValue { get => (Object)Value; set => Value = value; }
        public string[] enumNames => Enum.GetNames(_field.FieldType);
        public int enumValueIndex
        {
            get => Array.IndexOf(Enum.GetNames(_field.FieldType), Value.ToString());
            set => Value = Enum.Parse(_field.FieldType, Enum.GetNames(_field.FieldType)[value]);
        }
    }

    /// <summary>Test-only control of the stub editor: project folder, main-thread queue, script compilation.</summary>
    public static class StubEditor
    {
        private static readonly ConcurrentQueue<Action> MainQueue = new ConcurrentQueue<Action>();
        private static readonly object CompileGate = new object();
        private static int _generation;
        public static string ProjectRoot => Path.GetDirectoryName(Application.dataPath);
        public static volatile bool Compiling;

        /// <summary>Called by the host after a successful compile, on the main thread (it restarts the bridge).</summary>
        public static Action AfterReload;

        /// <summary>Runs one editor frame: queued main-thread work, then EditorApplication.update.</summary>
        public static void Frame()
        {
            Action next;
            while (MainQueue.TryDequeue(out next)) next();
            EditorApplication.update?.Invoke();
        }

        public static void Quit() => EditorApplication.RaiseQuitting();

        /// <summary>Compiles Assets/**/*.cs with mcs like Unity's Assembly-CSharp, off the main thread.</summary>
        public static void CompileScripts()
        {
            Compiling = true;
            Task.Run(() =>
            {
                lock (CompileGate)
                {
                    CompilationPipeline.RaiseStarted();
                    string[] sources = Directory.GetFiles(Path.Combine(ProjectRoot, "Assets"), "*.cs", SearchOption.AllDirectories);
                    string outDir = Path.Combine(ProjectRoot, "Library", "ScriptAssemblies");
                    Directory.CreateDirectory(outDir);
                    string output = Path.Combine(outDir, "Assembly-CSharp-" + (++_generation) + ".dll");
                    var messages = RunMcs(sources, output);
                    CompilationPipeline.RaiseAssemblyFinished(output, messages.ToArray());
                    bool ok = messages.All(m => m.type != CompilerMessageType.Error);
                    Compiling = false;
                    CompilationPipeline.RaiseFinished();
                    if (!ok) return;
                    Assembly.LoadFrom(output);
                    MainQueue.Enqueue(() =>
                    {
                        AssemblyReloadEvents.RaiseBefore();
                        System.Threading.Thread.Sleep(300);
                        AfterReload?.Invoke();
                    });
                }
            });
        }

        private static List<CompilerMessage> RunMcs(string[] sources, string output)
        {
            string engine = typeof(GameObject).Assembly.Location;
            var info = new ProcessStartInfo("mcs")
            {
                UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true,
                WorkingDirectory = ProjectRoot,
            };
            info.Arguments = "-target:library -out:\"" + output + "\" -r:\"" + engine + "\" " +
                string.Join(" ", sources.Select(s => "\"" + s.Substring(ProjectRoot.Length + 1) + "\""));
            var messages = new List<CompilerMessage>();
            using (Process mcs = Process.Start(info))
            {
                string text = mcs.StandardOutput.ReadToEnd() + mcs.StandardError.ReadToEnd();
                mcs.WaitForExit();
                var pattern = new Regex(@"^(.*)\((\d+),(\d+)\): (error|warning) (CS\d+): (.*)$");
                foreach (string line in text.Split('\n').Select(l => l.Trim()).Distinct())
                {
                    Match m = pattern.Match(line);
                    if (!m.Success) continue;
                    messages.Add(new CompilerMessage
                    {
                        file = m.Groups[1].Value, line = int.Parse(m.Groups[2].Value), column = int.Parse(m.Groups[3].Value),
                        type = m.Groups[4].Value == "error" ? CompilerMessageType.Error : CompilerMessageType.Warning,
                        message = m.Groups[5].Value + ": " + m.Groups[6].Value,
                    });
                }
            }
            return messages;
        }
    }
}

namespace UnityEditor.Compilation
{
    public enum CompilerMessageType { Error = 0, Warning = 1 }

    public struct CompilerMessage
    {
        public string message;
        public string file;
        public int line;
        public int column;
        public CompilerMessageType type;
    }

    public static class CompilationPipeline
    {
        public static event Action<object> compilationStarted;
        public static event Action<object> compilationFinished;
        public static event Action<string, CompilerMessage[]> assemblyCompilationFinished;

        public static void RequestScriptCompilation() => StubEditor.CompileScripts();

        internal static void RaiseStarted() => compilationStarted?.Invoke(null);
        internal static void RaiseFinished() => compilationFinished?.Invoke(null);
        internal static void RaiseAssemblyFinished(string path, CompilerMessage[] messages) => assemblyCompilationFinished?.Invoke(path, messages);
    }
}

namespace UnityEditor.SceneManagement
{
    public enum OpenSceneMode { Single = 0, Additive = 1, AdditiveWithoutLoading = 2 }
    public enum NewSceneSetup { EmptyScene = 0, DefaultGameObjects = 1 }
    public enum NewSceneMode { Single = 0, Additive = 1 }

    public static class EditorSceneManager
    {
        /// <summary>Like Unity's: an unsaved scene, with a camera and a light for DefaultGameObjects.</summary>
        public static Scene NewScene(NewSceneSetup setup, NewSceneMode mode)
        {
            StubScene.Roots.Clear();
            StubScene.Path = "";
            StubScene.Name = "Untitled";
            StubScene.Dirty = false;
            if (setup == NewSceneSetup.DefaultGameObjects)
            {
                new GameObject("Main Camera").AddComponent(typeof(Camera));
                new GameObject("Directional Light").AddComponent(typeof(Light));
            }
            return new Scene();
        }

        public static Scene OpenScene(string scenePath, OpenSceneMode mode)
        {
            if (!File.Exists(Path.Combine(StubEditor.ProjectRoot, scenePath))) throw new ArgumentException("Cannot open scene " + scenePath);
            StubScene.Roots.Clear();
            StubScene.Path = scenePath;
            StubScene.Name = Path.GetFileNameWithoutExtension(scenePath);
            StubScene.Dirty = false;
            return new Scene();
        }

        public static bool SaveScene(Scene scene, string dstScenePath)
        {
            string full = Path.Combine(StubEditor.ProjectRoot, dstScenePath);
            Directory.CreateDirectory(Path.GetDirectoryName(full));
            File.WriteAllLines(full, StubScene.All().Select(g => g.name));
            StubScene.Path = dstScenePath;
            StubScene.Name = Path.GetFileNameWithoutExtension(dstScenePath);
            StubScene.Dirty = false;
            return true;
        }

        public static bool MarkSceneDirty(Scene scene)
        {
            StubScene.Dirty = true;
            return true;
        }
    }
}
