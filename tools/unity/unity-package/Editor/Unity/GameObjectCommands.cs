// gameobject.* and prefab.save: create, find, move, add components, set serialized fields, save prefabs.
using System;
using System.Collections.Generic;
using System.Linq;
using UnityEditor;
using UnityEngine;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Scene object commands; every Unity call runs on the main thread.</summary>
    public sealed class GameObjectCommands : IBridgeCommandSet
    {
        private readonly IMainThreadDispatcher _main;

        public GameObjectCommands(IMainThreadDispatcher main) { _main = main; }

        public void Register(CommandRegistry registry)
        {
            registry.Add("gameobject.create", (args, token) => Main(() => Create(args)));
            registry.Add("gameobject.find", (args, token) => Main(() => FindAll(args)));
            registry.Add("gameobject.set_transform", (args, token) => Main(() => SetTransform(args)));
            registry.Add("gameobject.add_component", (args, token) => Main(() => AddComponent(args)));
            registry.Add("gameobject.set_field", (args, token) => Main(() => SetField(args)));
            registry.Add("gameobject.delete", (args, token) => Main(() => Delete(args)));
            registry.Add("prefab.save", (args, token) => Main(() => SavePrefab(args)));
        }

        private async System.Threading.Tasks.Task<object> Main(Func<object> work) => await _main.Run(work);

        private static object Create(CommandArgs args)
        {
            string name = args.GetString("name");
            string primitive = args.GetString("primitive", null);
            GameObject created;
            if (primitive == null) created = new GameObject(name);
            else
            {
                PrimitiveType type;
                if (!Enum.TryParse(primitive, true, out type))
                    throw new BridgeException(ErrorCodes.InvalidArgs, "primitive must be one of " + string.Join(", ", Enum.GetNames(typeof(PrimitiveType))));
                created = GameObject.CreatePrimitive(type);
                created.name = name;
            }
            Undo.RegisterCreatedObjectUndo(created, "Create " + name);
            if (args.Has("parent")) created.transform.SetParent(SceneObjects.Resolve(args.GetString("parent")).transform, false);
            ApplyTransform(created.transform, args);
            MarkDirty(created);
            return SceneObjects.Describe(created);
        }

        private static object FindAll(CommandArgs args)
        {
            string query = args.GetString("query");
            var matches = SceneObjects.Find(query).Take(args.GetInt32("limit", 50, 1, int.MaxValue)).Select(g => (object)SceneObjects.Describe(g)).ToList();
            return new Dictionary<string, object> { { "matches", matches } };
        }

        private static object SetTransform(CommandArgs args)
        {
            GameObject target = SceneObjects.Resolve(args.GetString("path"));
            Undo.RecordObject(target.transform, "Set transform");
            ApplyTransform(target.transform, args);
            MarkDirty(target);
            return SceneObjects.Describe(target);
        }

        private static void ApplyTransform(Transform t, CommandArgs args)
        {
            if (args.Has("position")) t.localPosition = SceneObjects.ToVector3(args.GetVector3("position"));
            if (args.Has("rotation_euler")) t.localEulerAngles = SceneObjects.ToVector3(args.GetVector3("rotation_euler"));
            if (args.Has("scale")) t.localScale = SceneObjects.ToVector3(args.GetVector3("scale"));
        }

        private static object AddComponent(CommandArgs args)
        {
            GameObject target = SceneObjects.Resolve(args.GetString("path"));
            Type type = SceneObjects.FindComponentType(args.GetString("component"));
            Component added = Undo.AddComponent(target, type);
            if (added == null) throw new BridgeException(ErrorCodes.PreconditionFailed, "Unity refused to add " + type.Name + " to " + target.name);
            MarkDirty(target);
            return SceneObjects.Describe(target);
        }

        private static object SetField(CommandArgs args)
        {
            GameObject target = SceneObjects.Resolve(args.GetString("path"));
            string componentName = args.GetString("component");
            Component component = target.GetComponents<Component>()
                .FirstOrDefault(c => c != null && (c.GetType().Name == componentName || c.GetType().FullName == componentName));
            if (component == null) throw new BridgeException(ErrorCodes.NotFound, target.name + " has no component " + componentName);
            string field = args.GetString("field");
            var serialized = new SerializedObject(component);
            SerializedProperty property = serialized.FindProperty(field);
            if (property == null) throw new BridgeException(ErrorCodes.NotFound, componentName + " has no serialized field '" + field + "'");
            SerializedValues.Write(property, args.GetValue("value"));
            serialized.ApplyModifiedProperties();
            MarkDirty(target);
            return new Dictionary<string, object>
            {
                { "path", SceneObjects.PathOf(target) }, { "component", component.GetType().Name },
                { "field", field }, { "value", SerializedValues.Read(property) },
            };
        }

        private static object Delete(CommandArgs args)
        {
            GameObject target = SceneObjects.Resolve(args.GetString("path"));
            string path = SceneObjects.PathOf(target);
            Undo.DestroyObjectImmediate(target);
            return new Dictionary<string, object> { { "deleted", path } };
        }

        private static object SavePrefab(CommandArgs args)
        {
            GameObject target = SceneObjects.Resolve(args.GetString("path"));
            string assetPath = args.GetString("asset_path");
            if (!assetPath.StartsWith("Assets/", StringComparison.Ordinal) || !assetPath.EndsWith(".prefab", StringComparison.Ordinal))
                throw new BridgeException(ErrorCodes.InvalidArgs, "asset_path must look like Assets/Name.prefab");
            bool success;
            PrefabUtility.SaveAsPrefabAsset(target, assetPath, out success);
            if (!success) throw new BridgeException(ErrorCodes.Internal, "Unity could not save the prefab to " + assetPath);
            return new Dictionary<string, object> { { "asset_path", assetPath }, { "source", SceneObjects.PathOf(target) } };
        }

        private static void MarkDirty(GameObject g)
        {
            if (!EditorApplication.isPlaying) UnityEditor.SceneManagement.EditorSceneManager.MarkSceneDirty(g.scene);
        }
    }

    /// <summary>Converts JSON values to and from SerializedProperty values.</summary>
    public static class SerializedValues
    {
        public static void Write(SerializedProperty property, object value)
        {
            switch (property.propertyType)
            {
                case SerializedPropertyType.Integer: property.longValue = Convert.ToInt64(Number(value, property)); break;
                case SerializedPropertyType.Float: property.doubleValue = Number(value, property); break;
                case SerializedPropertyType.Boolean:
                    if (!(value is bool)) throw Mismatch(property, "true or false");
                    property.boolValue = (bool)value;
                    break;
                case SerializedPropertyType.String:
                    if (!(value is string)) throw Mismatch(property, "a string");
                    property.stringValue = (string)value;
                    break;
                case SerializedPropertyType.Enum:
                    if (value is string)
                    {
                        int index = Array.IndexOf(property.enumNames, (string)value);
                        if (index < 0) throw Mismatch(property, "one of " + string.Join(", ", property.enumNames));
                        property.enumValueIndex = index;
                    }
                    else property.enumValueIndex = Convert.ToInt32(Number(value, property));
                    break;
                case SerializedPropertyType.Vector3:
                    double[] v = Numbers(value, 3, property);
                    property.vector3Value = new Vector3((float)v[0], (float)v[1], (float)v[2]);
                    break;
                case SerializedPropertyType.Vector2:
                    double[] w = Numbers(value, 2, property);
                    property.vector2Value = new Vector2((float)w[0], (float)w[1]);
                    break;
                case SerializedPropertyType.Color:
                    double[] c = Numbers(value, 4, property);
                    property.colorValue = new Color((float)c[0], (float)c[1], (float)c[2], (float)c[3]);
                    break;
                case SerializedPropertyType.ObjectReference:
                    property.objectReferenceValue = Reference(value as string, property);
                    break;
                default:
                    throw new BridgeException(ErrorCodes.InvalidArgs, "Setting fields of type " + property.propertyType + " is not supported");
            }
        }

        public static object Read(SerializedProperty property)
        {
            switch (property.propertyType)
            {
                case SerializedPropertyType.Integer: return property.longValue;
                case SerializedPropertyType.Float: return property.doubleValue;
                case SerializedPropertyType.Boolean: return property.boolValue;
                case SerializedPropertyType.String: return property.stringValue;
                case SerializedPropertyType.Enum:
                    int i = property.enumValueIndex;
                    return i >= 0 && i < property.enumNames.Length ? (object)property.enumNames[i] : i;
                case SerializedPropertyType.Vector3: return SceneObjects.Vector(property.vector3Value);
                case SerializedPropertyType.Vector2: return new List<object> { SceneObjects.Number(property.vector2Value.x), SceneObjects.Number(property.vector2Value.y) };
                case SerializedPropertyType.Color:
                    Color c = property.colorValue;
                    return new List<object> { SceneObjects.Number(c.r), SceneObjects.Number(c.g), SceneObjects.Number(c.b), SceneObjects.Number(c.a) };
                case SerializedPropertyType.ObjectReference:
                    return property.objectReferenceValue == null ? null : property.objectReferenceValue.name;
                default: return property.propertyType.ToString();
            }
        }

        private static UnityEngine.Object Reference(string value, SerializedProperty property)
        {
            if (value == null) return null;
            if (value.StartsWith("Assets/", StringComparison.Ordinal))
            {
                UnityEngine.Object asset = AssetDatabase.LoadAssetAtPath<UnityEngine.Object>(value);
                if (asset == null) throw new BridgeException(ErrorCodes.NotFound, "No asset at " + value);
                return asset;
            }
            return SceneObjects.Resolve(value);
        }

        private static double Number(object value, SerializedProperty property)
        {
            if (value is long) return (long)value;
            if (value is double) return (double)value;
            throw Mismatch(property, "a number");
        }

        private static double[] Numbers(object value, int count, SerializedProperty property)
        {
            var list = value as List<object>;
            if (list == null || list.Count != count) throw Mismatch(property, "a list of " + count + " numbers");
            return list.Select(item => Number(item, property)).ToArray();
        }

        private static BridgeException Mismatch(SerializedProperty property, string expected)
        {
            return new BridgeException(ErrorCodes.InvalidArgs, "Field '" + property.name + "' is " + property.propertyType + ": give " + expected);
        }
    }
}
