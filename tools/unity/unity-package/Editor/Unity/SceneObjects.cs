// Finding GameObjects by hierarchy path and describing them as JSON-able dictionaries.
using System;
using System.Collections.Generic;
using System.Linq;
using UnityEngine;
using UnityEngine.SceneManagement;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Looks GameObjects up in the open scenes and turns them into plain data.</summary>
    public static class SceneObjects
    {
        /// <summary>"Root/Child/Leaf" by path, else the first object with that name.</summary>
        public static GameObject Resolve(string pathOrName)
        {
            GameObject found = Find(pathOrName).FirstOrDefault();
            if (found == null) throw new BridgeException(ErrorCodes.NotFound, "No GameObject '" + pathOrName + "' in the open scenes");
            return found;
        }

        public static IEnumerable<GameObject> Find(string pathOrName)
        {
            var all = AllObjects().ToList();
            var byPath = all.Where(g => PathOf(g) == pathOrName).ToList();
            return byPath.Count > 0 ? byPath : all.Where(g => g.name == pathOrName).ToList();
        }

        public static IEnumerable<GameObject> AllObjects()
        {
            for (int i = 0; i < SceneManager.sceneCount; i++)
            {
                Scene scene = SceneManager.GetSceneAt(i);
                if (!scene.isLoaded) continue;
                foreach (GameObject root in scene.GetRootGameObjects())
                    foreach (GameObject g in Walk(root)) yield return g;
            }
        }

        private static IEnumerable<GameObject> Walk(GameObject root)
        {
            yield return root;
            Transform t = root.transform;
            for (int i = 0; i < t.childCount; i++)
                foreach (GameObject g in Walk(t.GetChild(i).gameObject)) yield return g;
        }

        public static string PathOf(GameObject g)
        {
            var parts = new List<string>();
            for (Transform t = g.transform; t != null; t = t.parent) parts.Add(t.name);
            parts.Reverse();
            return string.Join("/", parts);
        }

        /// <summary>A float as the shortest double that prints the same (0.2f becomes 0.2, not 0.2000000029).</summary>
        public static double Number(float value) => JsonNumbers.ShortestForFloat(value);

        public static List<object> Vector(Vector3 v) => new List<object> { Number(v.x), Number(v.y), Number(v.z) };

        public static Vector3 ToVector3(double[] xyz) => new Vector3((float)xyz[0], (float)xyz[1], (float)xyz[2]);

        public static Dictionary<string, object> Describe(GameObject g)
        {
            Transform t = g.transform;
            var components = g.GetComponents<Component>().Where(c => c != null).Select(c => (object)c.GetType().Name).ToList();
            // Unity objects overload ==: test each link explicitly rather than with '?.'.
            MeshFilter filter = g.GetComponent<MeshFilter>();
            string mesh = filter != null && filter.sharedMesh != null ? filter.sharedMesh.name : null;
            return new Dictionary<string, object>
            {
                { "name", g.name },
                { "path", PathOf(g) },
                { "instance_id", g.GetInstanceID() },
                { "active", g.activeSelf },
                { "position", Vector(t.localPosition) },
                { "rotation_euler", Vector(t.localEulerAngles) },
                { "scale", Vector(t.localScale) },
                { "components", components },
                { "mesh", mesh },
                { "children", t.childCount },
            };
        }

        /// <summary>A component type by short or full name, searched in every loaded assembly.</summary>
        public static Type FindComponentType(string name)
        {
            Type match = null;
            foreach (var assembly in AppDomain.CurrentDomain.GetAssemblies())
            {
                Type[] types;
                try { types = assembly.GetTypes(); }
                catch (System.Reflection.ReflectionTypeLoadException e) { types = e.Types.Where(t => t != null).ToArray(); }
                foreach (Type type in types)
                {
                    if (!typeof(Component).IsAssignableFrom(type) || type.IsAbstract) continue;
                    if (type.FullName == name) return type;
                    if (type.Name == name && match == null) match = type;
                }
            }
            if (match == null) throw new BridgeException(ErrorCodes.NotFound, "No component type '" + name + "' (has the script compiled?)", false);
            return match;
        }
    }
}
