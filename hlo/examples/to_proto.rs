fn main() {
    let a: Vec<String> = std::env::args().collect();
    let m = hlo::parse::parse_module(&std::fs::read_to_string(&a[1]).unwrap()).unwrap();
    let p = hlo::proto::module_to_proto(&m).unwrap();
    if a.len() > 2 {
        std::fs::write(&a[2], prost::Message::encode_to_vec(&p)).unwrap();
    } else {
        println!("{p:#?}");
    }
}
