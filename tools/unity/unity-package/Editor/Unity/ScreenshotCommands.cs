// camera.screenshot: render a camera into an off-screen texture and return PNG bytes.
using System;
using System.Collections.Generic;
using System.Linq;
using UnityEngine;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Renders a scene camera off-screen; the PNG travels base64-encoded in the response.</summary>
    public sealed class ScreenshotCommands : IBridgeCommandSet
    {
        private const int MaxSide = 4096;
        private readonly IMainThreadDispatcher _main;

        public ScreenshotCommands(IMainThreadDispatcher main) { _main = main; }

        public void Register(CommandRegistry registry)
        {
            registry.Add("camera.screenshot", async (args, token) => await _main.Run(() => Capture(args)));
        }

        private static Camera Pick(string name)
        {
            if (name != null)
            {
                Camera named = SceneObjects.Find(name).Select(g => g.GetComponent<Camera>()).FirstOrDefault(c => c != null);
                if (named == null) throw new BridgeException(ErrorCodes.NotFound, "No camera on a GameObject named '" + name + "'");
                return named;
            }
            // Unity objects overload ==, so no '??' here.
            Camera found = Camera.main;
            if (found == null) found = Camera.allCameras.FirstOrDefault();
            if (found == null) throw new BridgeException(ErrorCodes.NotFound, "The scene has no camera to render");
            return found;
        }

        private static object Capture(CommandArgs args)
        {
            int width = args.GetInt32("width", 512, 1, MaxSide);
            int height = args.GetInt32("height", 512, 1, MaxSide);
            Camera camera = Pick(args.GetString("camera", null));
            var target = new RenderTexture(width, height, 24);
            var image = new Texture2D(width, height, TextureFormat.RGB24, false);
            RenderTexture previousTarget = camera.targetTexture;
            RenderTexture previousActive = RenderTexture.active;
            try
            {
                camera.targetTexture = target;
                camera.Render();
                RenderTexture.active = target;
                image.ReadPixels(new Rect(0, 0, width, height), 0, 0);
                image.Apply();
                byte[] png = image.EncodeToPNG();
                return new Dictionary<string, object>
                {
                    { "camera", camera.name }, { "width", width }, { "height", height },
                    { "png_base64", Convert.ToBase64String(png) },
                };
            }
            finally
            {
                camera.targetTexture = previousTarget;
                RenderTexture.active = previousActive;
                UnityEngine.Object.DestroyImmediate(target);
                UnityEngine.Object.DestroyImmediate(image);
            }
        }
    }
}
