extends SceneTree
# agentsdk harness (Godot 3): opens a scene, runs it for a number of frames or seconds,
# optionally saves screenshots and a dump of the scene tree, then quits.
# The job is a JSON file named by the AGENTSDK_GODOT_JOB environment variable.

var _job = {}
var _frames = 0
var _start_ms = 0
var _shots = []
# the visibility report: 0 none yet, 1 paused and waiting for one draw, 2 passes running, 3 done
var _report_state = 0
var _vision = null
# the instanced scene: frames count, and the tree is measured, only once it is in the tree
# (the deferred add_child and set_current_scene may not have run by the first idle frame)
var _scene = null


func _init():
	var file = File.new()
	if file.open(OS.get_environment("AGENTSDK_GODOT_JOB"), File.READ) != OK:
		printerr("AGENTSDK: cannot read the job file")
		quit(3)
		return
	_job = parse_json(file.get_as_text())
	file.close()
	_shots = _job.get("capture_frames", [])
	var scene = _job.get("scene", "")
	if scene == "":
		scene = ProjectSettings.get_setting("application/run/main_scene")
	if scene == null or scene == "":
		printerr("AGENTSDK: no scene given and the project has no main scene")
		quit(3)
		return
	var packed = load(scene)
	if packed == null or not packed is PackedScene:
		printerr("AGENTSDK: cannot load scene ", scene)
		quit(3)
		return
	var node = packed.instance()
	if node == null:
		printerr("AGENTSDK: cannot instance scene ", scene)
		quit(3)
		return
	if int(_job.get("view_width", 0)) > 0:
		# measurements project through the camera at the screenshot's size
		get_root().set_size(Vector2(int(_job["view_width"]), int(_job["view_height"])))
	_scene = node
	root.call_deferred("add_child", node)
	call_deferred("set_current_scene", node)
	_start_ms = OS.get_ticks_msec()
	print("AGENTSDK_STARTED")


func _idle(_delta):
	if _scene == null or not _scene.is_inside_tree():
		return
	if _report_state == 1:
		# this draw showed the frozen scene: it is the picture; the passes use the same state
		_capture_to("%s/beauty.png" % _job["report_dir"])
		_vision = VisionPass.new(_scene, get_root(), _job)
		_vision.start()
		_report_state = 2
		return
	if _report_state == 2:
		if not _vision.advance():
			return
		_vision = null
		_report_state = 3
		paused = false
	_frames += 1
	if _frames in _shots:
		_capture()
	var report_frame = int(_job.get("report_frame", 0))
	if report_frame > 0 and _frames == report_frame and _report_state == 0:
		# freeze scripts, animation and physics so the picture and its passes agree
		paused = true
		_report_state = 1
		return
	var seconds = float(_job.get("seconds", 0.0))
	var frames = int(_job.get("frames", 0))
	var elapsed = (OS.get_ticks_msec() - _start_ms) / 1000.0
	if (frames > 0 and _frames >= frames) or (seconds > 0.0 and elapsed >= seconds):
		_finish()


func _capture():
	_capture_to("%s/frame_%d.png" % [_job["capture_dir"], _frames])


func _capture_to(path):
	var image = root.get_texture().get_data()
	if image == null:
		printerr("AGENTSDK: no frame to capture (is this the headless server build?)")
		return
	image.flip_y()
	image.save_png(path)


func _finish():
	if _job.get("measure_out", "") != "":
		var dump = File.new()
		dump.open(_job["measure_out"], File.WRITE)
		dump.store_string(to_json(measure(_scene)))
		dump.close()
	if _job.get("tree_out", "") != "":
		var out = File.new()
		out.open(_job["tree_out"], File.WRITE)
		out.store_string(to_json(describe(_scene, int(_job.get("tree_depth", 32)))))
		out.close()
	print("AGENTSDK_FINISHED frames=%d" % _frames)
	quit(0)


static func describe(node, depth):
	var info = {"name": node.name, "type": node.get_class(), "properties": {}, "children": []}
	var script = node.get_script()
	info["script"] = script.resource_path if script != null else ""
	var blank = ClassDB.instance(node.get_class())
	for prop in node.get_property_list():
		var usage = prop["usage"]
		var name = prop["name"]
		var wanted = usage & PROPERTY_USAGE_SCRIPT_VARIABLE
		if usage & PROPERTY_USAGE_STORAGE and blank != null and name != "script":
			wanted = wanted or typeof(blank.get(name)) != typeof(node.get(name)) or blank.get(name) != node.get(name)
		if wanted:
			info["properties"][name] = value_text(node.get(name))
	if blank != null and not blank is Reference:
		blank.free()
	if depth > 0:
		for child in node.get_children():
			info["children"].append(describe(child, depth - 1))
	return info


static func value_text(value):
	if typeof(value) == TYPE_OBJECT:
		if value == null:
			return "null"
		if value is Resource and value.resource_path != "":
			return "%s(\"%s\")" % [value.get_class(), value.resource_path]
		return "%s()" % value.get_class()
	return var2str(value)


# ---------- measurements: world bounds of every node, and where the camera sees them


static func node_bounds(node):
	"""The world AABB of a node's own geometry and its descendants', or null."""
	var box = null
	if node is VisualInstance and node.is_visible_in_tree():
		var own = node.get_transformed_aabb()
		if own.size != Vector3():
			box = own
	for child in node.get_children():
		var inner = node_bounds(child)
		if inner != null:
			box = inner if box == null else box.merge(inner)
	return box


static func corners(box):
	var out = []
	for i in range(8):
		out.append(box.position + box.size * Vector3(i & 1, (i >> 1) & 1, (i >> 2) & 1))
	return out


static func measure(scene):
	var camera = scene.get_viewport().get_camera()
	var size = scene.get_viewport().size
	var view = {"width": size.x, "height": size.y, "camera": "", "root": scene.name}
	if camera != null:
		view["camera"] = str(scene.get_path_to(camera)) if scene.is_a_parent_of(camera) or camera == scene else str(camera.get_path())
		view["origin"] = vec(camera.global_transform.origin)
	var nodes = []
	var stack = [scene]
	while not stack.empty():
		var node = stack.pop_front()
		for child in node.get_children():
			stack.append(child)
		if not node is Spatial:
			continue
		var entry = {"path": str(scene.get_path_to(node)), "type": node.get_class()}
		var world = node.global_transform
		entry["origin"] = vec(world.origin)
		entry["basis"] = [vec(world.basis.x), vec(world.basis.y), vec(world.basis.z)]  # its axes
		entry["geometry"] = node is GeometryInstance  # draws (a light's or probe's box does not)
		if node is Camera:
			entry["camera"] = {"fov": node.fov, "near": node.near, "far": node.far, "projection": node.projection, "size": node.size, "keep_aspect": node.keep_aspect}
		var box = node_bounds(node)
		if node is VisualInstance and node.is_visible_in_tree():
			var own = node.get_transformed_aabb()
			if own.size != Vector3():  # its own geometry, without its children's
				entry["own_min"] = vec(own.position)
				entry["own_max"] = vec(own.end)
		if box != null:
			entry["min"] = vec(box.position)
			entry["max"] = vec(box.end)
			if camera != null:
				var screen = []
				var behind = 0
				for corner in corners(box):
					if camera.is_position_behind(corner):
						behind += 1
					else:
						var at = camera.unproject_position(corner)
						screen.append([at.x, at.y])
				entry["screen"] = screen
				entry["corners_behind"] = behind
		nodes.append(entry)
	return {"view": view, "nodes": nodes}


static func vec(v):
	return [v.x, v.y, v.z]


# ---------- the object-ID passes behind a screenshot's visibility report


class VisionPass extends Reference:
	# Renders, with a copy of the current camera, into a viewport SCALE times the frame's size
	# (same pixel scale, so its middle is the frame itself): one pass with every named object in
	# a flat colour, then one pass per object alone. Writes the raw passes and a JSON index to
	# the job's report folder. Uses layers and material overrides, and restores both.
	const ID_LAYER = 1 << 18
	const HIDDEN_LAYER = 1 << 19

	var scene
	var root
	var dir
	var scale = 3
	var limit = 32
	var objects = []  # [{"name", "index", "geoms", facts...}]
	var saved = []  # [geometry, layers, material_override]
	var viewport = null
	var camera = null
	var queue = []  # object numbers still to render alone
	var current = 0  # 0: the ID pass is on screen; k: object k alone
	var index = {}
	var by_name = {}

	func _init(p_scene, p_root, job):
		scene = p_scene
		root = p_root
		dir = job["report_dir"]
		scale = int(job.get("report_scale", 3))
		limit = int(job.get("alone_limit", 32))

	func start():
		var source = root.get_camera()
		var size = root.size
		index = {"width": int(size.x), "height": int(size.y), "scale": scale, "camera": source != null, "objects": [], "view": ""}
		if source != null:
			index["view"] = str(scene.get_path_to(source)) if scene.is_a_parent_of(source) else str(source.name)
		_collect(scene, source)
		# the lights and the camera's axes: a dark frame's hint says which light to turn
		index["scene"] = scene.filename
		index["lights"] = []
		_collect_lights(scene)
		if source != null:
			index["camera_axes"] = _axes(source.global_transform.basis)
		for item in objects:
			# an object nothing can be in front of needs no pass alone: the ID pass shows all of it
			item["clear"] = source != null and _nothing_in_front(item)
			index["objects"].append({"name": item["name"], "index": item["index"], "behind_camera": item["behind_camera"], "outside_frustum": item["outside_frustum"], "alone": "", "clear": item["clear"]})
		var colours = id_colours(objects.size())
		var shader = Shader.new()
		shader.code = "shader_type spatial;\nrender_mode unshaded;\nuniform vec4 id_colour;\nvoid fragment() {\n\tALBEDO = id_colour.rgb;\n}\n"
		for item in objects:
			var material = ShaderMaterial.new()
			material.shader = shader
			material.set_shader_param("id_colour", colours[item["index"]])
			for geom in item["geoms"]:
				saved.append([geom, geom.layers, geom.material_override])
				geom.material_override = material
				geom.layers = ID_LAYER
		if source == null:
			_write_index()
			return
		viewport = Viewport.new()
		viewport.size = size * scale
		viewport.msaa = Viewport.MSAA_DISABLED
		viewport.hdr = false
		viewport.keep_3d_linear = false
		viewport.usage = Viewport.USAGE_3D
		viewport.render_target_v_flip = true
		viewport.render_target_update_mode = Viewport.UPDATE_ALWAYS
		viewport.shadow_atlas_size = 0
		viewport.world = root.find_world()
		camera = Camera.new()
		camera.keep_aspect = source.keep_aspect
		camera.near = source.near
		camera.far = source.far
		camera.h_offset = source.h_offset
		camera.v_offset = source.v_offset
		camera.cull_mask = ID_LAYER
		if source.projection == Camera.PROJECTION_ORTHOGONAL:
			camera.set_orthogonal(source.size * scale, source.near, source.far)
		else:
			var wide = 2.0 * rad2deg(atan(scale * tan(deg2rad(source.fov) / 2.0)))
			camera.set_perspective(wide, source.near, source.far)
		var env = Environment.new()
		env.background_mode = Environment.BG_COLOR
		env.background_color = Color(0, 0, 0)
		env.ambient_light_color = Color(0, 0, 0)
		env.tonemap_mode = Environment.TONE_MAPPER_LINEAR
		camera.environment = env
		viewport.add_child(camera)
		root.add_child(viewport)
		camera.global_transform = source.global_transform
		camera.current = true
		for item in objects:
			if not item["behind_camera"] and not item["outside_frustum"] and not item["clear"] and queue.size() < limit:
				queue.append(item["index"])
		current = 0

	func _collect(node, source):
		for child in node.get_children():
			if child is Spatial and not child.is_visible_in_tree():
				continue
			if child is GeometryInstance and (source == null or child.layers & source.cull_mask):
				var owner_node = _object_of(child)
				var name = str(scene.get_path_to(owner_node))
				var item = by_name.get(name)
				if item == null:
					item = {"name": name, "index": objects.size() + 1, "geoms": [], "box": null}
					objects.append(item)
					by_name[name] = item
				item["geoms"].append(child)
				var box = child.get_transformed_aabb()
				item["box"] = box if item["box"] == null else item["box"].merge(box)
			_collect(child, source)
		if node == scene:
			for item in objects:
				_facts(item, source)

	func _collect_lights(node):
		for child in node.get_children():
			if child is Spatial and not child.is_visible_in_tree():
				continue
			if child is Light:
				var b = child.global_transform.basis
				var entry = {"name": str(scene.get_path_to(child)), "type": child.get_class(), "energy": child.light_energy, "own": child.owner == scene, "direction": [-b.z.x, -b.z.y, -b.z.z]}
				var parent = child.get_parent()
				if parent is Spatial:
					entry["parent_axes"] = _axes(parent.global_transform.basis)
				index["lights"].append(entry)
			_collect_lights(child)

	static func _axes(b):
		return [[b.x.x, b.x.y, b.x.z], [b.y.x, b.y.y, b.y.z], [b.z.x, b.z.y, b.z.z]]

	func _object_of(geom):
		# a node of an instanced scene (an imported model) belongs to the instance's root
		var found = geom
		var node = geom.get_parent()
		while node != null and node != scene:
			if node.filename != "":
				found = node
			node = node.get_parent()
		return found

	func _facts(item, source):
		item["behind_camera"] = false
		item["outside_frustum"] = false
		if source == null:
			return
		var points = []
		var box = item["box"]
		for i in range(8):
			points.append(box.position + box.size * Vector3(i & 1, (i >> 1) & 1, (i >> 2) & 1))
		var behind = true
		for p in points:
			if not source.is_position_behind(p):
				behind = false
		item["behind_camera"] = behind
		# where it can show (the projected box; the whole view if it reaches behind the camera)
		# and how near it comes, to tell which objects may hide which
		var view = source.global_transform.affine_inverse()
		var rect = Rect2()
		var first = true
		var near = INF
		var far = -INF
		var spans = false
		for p in points:
			var depth = -(view * p).z
			near = min(near, depth)
			far = max(far, depth)
			if source.is_position_behind(p):
				spans = true
				continue
			var at = source.unproject_position(p)
			rect = Rect2(at, Vector2()) if first else rect.expand(at)
			first = false
		item["rect"] = rect
		item["whole_view"] = spans
		item["near"] = near
		item["far"] = far
		if not behind:
			for plane in source.get_frustum():
				var all_out = true
				for p in points:
					if not plane.is_point_over(p):
						all_out = false
				if all_out:
					item["outside_frustum"] = true

	func _nothing_in_front(item):
		if item["behind_camera"] or item["outside_frustum"]:
			return false
		for other in objects:
			if other == item or other["behind_camera"] or other["outside_frustum"]:
				continue
			var overlaps = item["whole_view"] or other["whole_view"] or item["rect"].grow(1).intersects(other["rect"].grow(1))
			if overlaps and other["near"] < item["far"]:
				return false
		return true

	static func id_colours(count):
		# the same grid as agentsdk.vision.id_colours: row 0 (black) is the background
		var levels = max(2, int(ceil(stepify(pow(count + 1, 1.0 / 3.0), 0.000000001))))
		var step = 255.0 / (levels - 1)
		var out = []
		for i in range(count + 1):
			var digits = [i / (levels * levels), (i / levels) % levels, i % levels]
			out.append(Color8(int(round(digits[0] * step)), int(round(digits[1] * step)), int(round(digits[2] * step))))
		return out

	func advance():
		"""Save what the last draw showed and set up the next pass; true when all are done."""
		if viewport == null:
			_restore()
			return true
		var image = viewport.get_texture().get_data()
		if current == 0:
			image.convert(Image.FORMAT_RGB8)
			_save(image, "ids.rgb")
		else:
			image.convert(Image.FORMAT_L8)
			_save(image, "alone_%d.l8" % current)
			index["objects"][current - 1]["alone"] = "alone_%d.l8" % current
		if queue.empty():
			_restore()
			_write_index()
			return true
		current = queue.pop_front()
		for item in objects:
			for geom in item["geoms"]:
				geom.layers = ID_LAYER if item["index"] == current else HIDDEN_LAYER
		return false

	func _save(image, name):
		var out = File.new()
		out.open("%s/%s" % [dir, name], File.WRITE)
		out.store_buffer(image.get_data())
		out.close()

	func _restore():
		for entry in saved:
			if is_instance_valid(entry[0]):
				entry[0].layers = entry[1]
				entry[0].material_override = entry[2]
		saved = []
		if viewport != null:
			viewport.queue_free()
			viewport = null

	func _write_index():
		var out = File.new()
		out.open("%s/report.json" % dir, File.WRITE)
		out.store_string(to_json(index))
		out.close()
